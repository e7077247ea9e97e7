"""Runs scim2-tester (PyPI, the RFC 7643/7644 compliance checker) against a running /scim/v2.

SCIM_URL and SCIM_TOKEN come from the environment (never the command line); every check's result
is printed as one JSON line, for tests/e2e/scim.test.ts to judge.
"""

import json
import os

from httpx2 import Client
from scim2_client.engines.httpx2 import SyncSCIMClient
from scim2_tester import check_server

client = SyncSCIMClient(Client(base_url=os.environ["SCIM_URL"], headers={"Authorization": f"Bearer {os.environ['SCIM_TOKEN']}"}, timeout=30))
for r in check_server(client):
    print(json.dumps({"status": r.status.name, "title": r.title, "resource": r.resource_type, "reason": r.reason, "tags": sorted(r.tags)}, default=str), flush=True)
