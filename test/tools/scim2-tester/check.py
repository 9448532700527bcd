"""Runs scim2-tester's checker against a SCIM 2.0 endpoint and prints one JSON line per result.

    python check.py --url http://127.0.0.1:8080/scim/v2 --token sdscim_...

scim2-tester has no command line of its own (its CLI is the separate scim2-cli): this is the
smallest driver of its Python API, check_server(client), with scim2-client's httpx2 engine.
Each line is {"key", "title", "resourceType", "urn", "status", "reason"}; `key` names one check
stably across runs (resource type, checker, attribute path). The last line is
{"summary": {...counts by status}}. Exit 0 once the checker ran, whatever it found (the caller
judges the results); 2 when it could not run.

One adaptation, a documented decision of Support Desk (services/identity/README.md, SCIM):
a user is known by an email address, so a User's `userName` must be one (or `emails` must hold
one), where scim2-tester fills every string with a random UUID. The checker runs twice:
- `as-is/...`: only User creation, unadapted: it shows (and keeps showing) that refusal;
- everything else with `userName` filled with a random email address instead of a UUID, so the
  rest of the User checks exercise the endpoint rather than stop at that refusal.
"""

import argparse
import json
import sys
import uuid

from httpx2 import Client
from scim2_client.engines.httpx2 import SyncSCIMClient
import scim2_tester.checkers.patch_add
import scim2_tester.checkers.patch_replace
import scim2_tester.filling
from scim2_tester import check_server

MODULES_GENERATING_VALUES = [
    scim2_tester.filling,
    scim2_tester.checkers.patch_add,
    scim2_tester.checkers.patch_replace,
]
generate_random_value = scim2_tester.filling.generate_random_value


def generate_email_user_names(context, path, *args, **kwargs):
    """scim2-tester's value generator, except for a User's userName: an email address."""
    value = generate_random_value(context, path, *args, **kwargs)
    if isinstance(value, str) and str(path) == "userName":
        return f"{uuid.uuid4()}@example.com"
    return value


def email_user_names(enabled):
    for module in MODULES_GENERATING_VALUES:
        module.generate_random_value = generate_email_user_names if enabled else generate_random_value


def key_of(result, prefix):
    urn = result.data.get("urn") if isinstance(result.data, dict) else None
    parts = [*prefix, result.resource_type or "-", result.title or "-"]
    if urn:
        parts.append(str(urn))
    return "/".join(parts), urn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--request-timeout", type=float, default=10.0)
    args = parser.parse_args()

    http = Client(
        base_url=args.url,
        headers={"Authorization": f"Bearer {args.token}"},
        timeout=args.request_timeout,
    )
    try:
        email_user_names(False)
        described = SyncSCIMClient(http)
        described.discover()  # the tag filter below also skips the discovery checks
        as_is = check_server(described, include_tags={"crud:create"}, resource_types=["User"])
        runs = [(["as-is"], [r for r in as_is if r.status.name != "SKIPPED"])]
        email_user_names(True)
        runs.append(([], check_server(SyncSCIMClient(http))))
    except Exception as exc:  # the checker itself broke, not a check
        print(f"scim2-tester could not run: {exc!r}", file=sys.stderr)
        return 2
    finally:
        http.close()

    counts = {}
    for prefix, results in runs:
        for result in results:
            key, urn = key_of(result, prefix)
            status = result.status.name
            counts[status] = counts.get(status, 0) + 1
            line = {
                "key": key,
                "title": result.title,
                "resourceType": result.resource_type,
                "urn": urn,
                "status": status,
                "reason": (result.reason or "")[:2000],
            }
            print(json.dumps(line), flush=True)
    print(json.dumps({"summary": counts}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
