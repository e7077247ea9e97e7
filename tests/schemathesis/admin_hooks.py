# Schemathesis hooks for the admin API (tests/e2e/schemathesis.test.ts).
#
# A few rules tie one field of a body to another, which JSON Schema cannot say (the document says them
# in words): a catalog entry names each version and provider once and does not fall back to itself, a
# version's context_length is at most its trained_context and its max_output at most its
# context_length, a workflow's graph uses exactly the placeholders its inputs declare, training data
# is JSON lines of {"q", "a"}, a guard policy's rules agree with their detector and each other
# (gateway/guard/policy.ts: patterns re2 compiles, kinds of the rule's detector, unique names, an
# allow rule beside a deny rule, restore with a redacting rule). And one the store decides: a
# workflow runs on a ComfyUI model of the catalog (ST_COMFY_MODEL, served by the test; a stateful link may bring a model another step
# removed (404) or one that is no ComfyUI model (409), as the document says). Cases
# keep what schemathesis drew with those made to agree; schemathesis checks a case again after a hook
# edits it, so one made valid here is judged as valid. An engine's log is read without follow, which
# would keep the answer open until schemathesis' read timeout.
import os
import re

import schemathesis

COMFY_MODEL = os.environ["ST_COMFY_MODEL"]

CURSOR = re.compile(r"[A-Za-z0-9_-]{1,200}")

TRAINING_DATA = '{"q": "2+2?", "a": "4"}\n{"q": "3+3?", "a": "6"}\n'


def once(items, key):
    seen, out = set(), []
    for item in items:
        k = item.get(key) if isinstance(item, dict) else None
        if k in seen:
            continue
        seen.add(k)
        out.append(item)
    return out


def number(v):
    # JSON's 16.0 is an integer too: schemathesis draws both.
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def fit_the_context(version):
    """context_length within trained_context, max_output within context_length (defaults 4096, 1024)."""
    if not isinstance(version, dict):
        return
    context = version.get("context_length", 4096)
    if number(version.get("trained_context")) and number(context) and context > version["trained_context"]:
        version["context_length"] = context = version["trained_context"]
    output = version.get("max_output", 1024)
    if number(context) and number(output) and output > context:
        version["max_output"] = context


GUARD_KINDS = {"pii": ["email"], "secrets": ["aws"]}


def agreeing_guard_policy(body):
    rules = [r for d in ("input", "output") if isinstance(body.get(d), list) for r in body[d] if isinstance(r, dict)]
    for d in ("input", "output"):
        if not isinstance(body.get(d), list):
            continue
        has_deny = any(isinstance(r, dict) and r.get("detector") == "deny" for r in body[d])
        for i, r in enumerate(body[d]):
            if not isinstance(r, dict):
                continue
            r["name"] = f"r{i}"
            det = r.get("detector")
            if not isinstance(det, str):
                continue  # a case drawn to be refused: left as it is
            if det == "allow" and not has_deny:
                det = r["detector"] = "deny"
            if det in GUARD_KINDS:
                r.pop("patterns", None)
                if "kinds" in r:
                    r["kinds"] = GUARD_KINDS[det]
            else:
                r.pop("kinds", None)
                if "patterns" in r or det in ("deny", "allow"):
                    r["patterns"] = ["x"]
            if det == "allow":
                r.pop("action", None)
            elif r.get("action") not in ("redact", "block", "flag") or (det == "injection" and r.get("action") == "redact"):
                r["action"] = "flag"
    if not rules:
        body["input"] = [{"name": "r0", "detector": "secrets", "action": "flag"}]
    if body.get("restore") is True and not any(isinstance(r, dict) and r.get("action") == "redact" for r in body.get("input") or []):
        body["restore"] = False


@schemathesis.hook
def before_call(context, case, kwargs):
    if case.operation.label == "GET /api/v1/replicas/{id}/logs" and isinstance(case.query, dict) and case.query.get("follow") == "true":
        # A followed log stays open for as long as the caller does (what it is for): a case reads the tail only.
        case.query["follow"] = "false"
    if case.operation.label == "GET /api/v1/audit" and isinstance(case.query, dict) and isinstance(case.query.get("cursor"), str) and CURSOR.fullmatch(case.query["cursor"]):
        # A cursor is opaque: only a page's `next` is one, which schemathesis cannot draw (any other is a
        # 400 naming it, tests/integration/audit-paging.test.ts). A drawn one of the right shape is left out.
        del case.query["cursor"]
    body = case.body
    if not isinstance(body, dict):
        return
    label = case.operation.label
    if label == "POST /api/v1/models":
        if isinstance(body.get("fallbacks"), list):
            body["fallbacks"] = [f for f in body["fallbacks"] if f != body.get("name")]
        for field, key in (("versions", "version"), ("providers", "name")):
            if isinstance(body.get(field), list):
                body[field] = once(body[field], key)
        if isinstance(body.get("versions"), list):
            for version in body["versions"]:
                fit_the_context(version)
    elif label == "POST /api/v1/comfy-workflows":
        if isinstance(body.get("graph"), dict):
            body["inputs"] = []
            body["graph"] = {"1": {"class_type": "SaveImage", "inputs": {}}}
        if isinstance(body.get("model"), str):
            body["model"] = COMFY_MODEL
    elif label == "POST /api/v1/guard/policies":
        agreeing_guard_policy(body)
    elif label == "POST /api/v1/training" and isinstance(body.get("data"), str):
        body["data"] = TRAINING_DATA
