"""A batch through the official openai Python SDK, as a client would run it (tests/e2e/batches.test.ts).

Reads OPENAI_BASE_URL, OPENAI_API_KEY, MODEL and LINES from the environment; uploads a file of
LINES embedding requests (purpose="batch"), creates the batch, polls it to its end, reads the
output file, pages through batches.list two at a time, and prints what it saw as one JSON object.
"""
import io
import json
import os
import time

from openai import OpenAI

client = OpenAI()
model = os.environ["MODEL"]
n = int(os.environ["LINES"])
lines = [
    json.dumps({"custom_id": f"py-{i}", "method": "POST", "url": "/v1/embeddings", "body": {"model": model, "input": f"text number {i}"}})
    for i in range(n)
]
f = client.files.create(file=("input.jsonl", io.BytesIO("\n".join(lines).encode())), purpose="batch")
b = client.batches.create(input_file_id=f.id, endpoint="/v1/embeddings", completion_window="24h", metadata={"from": "python"})
created_status = b.status
deadline = time.time() + 120
while b.status not in ("completed", "failed", "expired", "cancelled") and time.time() < deadline:
    time.sleep(0.3)
    b = client.batches.retrieve(b.id)
out = [json.loads(l) for l in client.files.content(b.output_file_id).text.splitlines()] if b.output_file_id else []
listed = [x.id for x in client.batches.list(limit=2)]  # auto-paging: every page, two at a time
print(json.dumps({
    "file": {"id": f.id, "purpose": f.purpose},
    "created_status": created_status,
    "batch": b.model_dump(),
    "output": [{"custom_id": o["custom_id"], "status_code": o["response"]["status_code"], "object": o["response"]["body"]["object"], "dims": len(o["response"]["body"]["data"][0]["embedding"])} for o in out],
    "listed": listed,
}))
