# Schemathesis hooks for the admin API (tests/e2e/schemathesis.test.ts).
#
# A few rules tie one field of a body to another, which JSON Schema cannot say: a catalog entry names
# each version and provider once and does not fall back to itself, a workflow's graph uses exactly the
# placeholders its inputs declare, training data is JSON lines of {"q", "a"}. Cases keep what
# schemathesis drew with those made to agree; schemathesis checks a case again after a hook edits it,
# so one made valid here is judged as valid.
import schemathesis

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


@schemathesis.hook
def before_call(context, case, kwargs):
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
    elif label == "POST /api/v1/comfy-workflows" and isinstance(body.get("graph"), dict):
        body["inputs"] = []
        body["graph"] = {"1": {"class_type": "SaveImage", "inputs": {}}}
    elif label == "POST /api/v1/training" and isinstance(body.get("data"), str):
        body["data"] = TRAINING_DATA
