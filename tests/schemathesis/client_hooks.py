# Schemathesis hooks for the client API (tests/e2e/schemathesis.test.ts sets the variables).
#
# Valid data for the job routes depends on what the store holds, which no OpenAPI document can
# say: a 3D job's picture must be a picture (the server sniffs its bytes), its file_id a picture file
# of the caller's project, a workflow run's inputs those its catalog entry declares, and a file
# deleted must still be there (each valid DELETE gets one uploaded for it). Cases keep the shape
# schemathesis drew (image or file_id, every other field) with those values made real; schemathesis
# checks a case again after a hook edits it, so one made valid here is judged as valid. The same goes
# for what the served model takes, which its entry in GET /v1/models says and no document can: an
# answer of at most its max_output (kept at 16 tokens here, so the run stays quick), vectors of at
# most 64 dimensions (the sim's), and a tool_choice that names one of the request's tools. Text to
# speech is asked of the sim model, in a format the sim encodes (wav or pcm: it refuses the others).
import base64
import os

import requests
import schemathesis

PICTURE = os.environ["ST_PICTURE_B64"]
PICTURE_FILE = os.environ["ST_PICTURE_FILE"]
SPARE_FILE = os.environ["ST_SPARE_FILE"]
WORKFLOW = os.environ["ST_WORKFLOW"]
BASE_URL, KEY = os.environ["ST_BASE_URL"], os.environ["ST_KEY"]
SIM, RESPONSE = os.environ["ST_SIM"], os.environ["ST_RESPONSE"]


def fresh_file():
    # A DELETE takes the file away: each valid one gets a file of its own, uploaded as a client would.
    r = requests.post(f"{BASE_URL}/v1/files", headers={"authorization": f"Bearer {KEY}"}, data={"purpose": "vision"}, files={"file": ("spare.png", base64.b64decode(PICTURE))}, timeout=30)
    r.raise_for_status()
    return r.json()["id"]


def fresh_response():
    # Likewise a stored response for each valid DELETE /v1/responses/{id}.
    r = requests.post(f"{BASE_URL}/v1/responses", headers={"authorization": f"Bearer {KEY}"}, json={"model": SIM, "input": "hi", "max_output_tokens": 2}, timeout=30)
    r.raise_for_status()
    return r.json()["id"]
INFERENCE = {"POST /v1/chat/completions", "POST /v1/completions", "POST /v1/embeddings", "POST /v1/rerank", "POST /v1/messages", "POST /v1/messages/count_tokens", "POST /v1/responses"}


def number(v):
    # JSON's 16.0 is an integer too: schemathesis draws both.
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def fit_the_model(body):
    for field in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
        if number(body.get(field)):
            body[field] = min(body[field], 16)
    if number(body.get("dimensions")):
        body["dimensions"] = min(body["dimensions"], 64)
    tools, choice = body.get("tools"), body.get("tool_choice")
    if not isinstance(tools, list) or not tools or not isinstance(choice, dict):
        return
    first = tools[0] if isinstance(tools[0], dict) else {}
    if isinstance(choice.get("function"), dict) and isinstance(first.get("function"), dict):
        choice["function"]["name"] = first["function"].get("name")
    elif choice.get("type") in ("tool", "function") and "name" in choice and "name" in first:
        choice["name"] = first["name"]


@schemathesis.hook
def before_call(context, case, kwargs):
    label = case.operation.label
    if label == "DELETE /v1/files/{id}" and (case.path_parameters or {}).get("id") == SPARE_FILE:
        case.path_parameters["id"] = fresh_file()
    if label == "DELETE /v1/responses/{id}" and (case.path_parameters or {}).get("id") == RESPONSE:
        case.path_parameters["id"] = fresh_response()
    if not isinstance(case.body, dict):
        return
    if label == "POST /v1/responses" and isinstance(case.body.get("previous_response_id"), str):
        # Only a stored response of the caller's project can be continued: that is the store's, not the document's.
        case.body["previous_response_id"] = RESPONSE
    if label in INFERENCE:
        fit_the_model(case.body)
    elif label == "POST /v1/3d/generations":
        if "image" in case.body:
            case.body["image"] = PICTURE
        if "file_id" in case.body:
            case.body["file_id"] = PICTURE_FILE
    elif label == "POST /v1/audio/speech":
        if isinstance(case.body.get("model"), str):
            case.body["model"] = SIM
        if case.body.get("response_format", "mp3") in ("mp3", "opus", "aac", "flac"):
            case.body["response_format"] = "wav"
    elif label == "POST /v1/workflows/runs" and case.body.get("model") == WORKFLOW:
        # The workflow declares no inputs: every other name is refused, as it should be.
        case.body["inputs"] = {}
