#!/usr/bin/env python3
"""A stand-in for one GPU provider's API (RunPod REST v2, Vast.ai, Lambda Cloud, AutoDL Pro),
serving the documented shapes kept in schemas.json (each with its source) and checking the
method, path, headers and body of every request. Tests drive it through /_standin/*:

  POST  /_standin/instances        replace the account's instances (the neutral form below)
  PATCH /_standin/instances/ID     change one (state, price, ssh_port, name …)
  POST  /_standin/script           {"fail": [{"status": 429, "times": 2, "after": n}], "malformed": n,
                                    "confirm_after": n, "page_size": n, "accumulate": yuan, "delay": seconds,
                                    "charges": {"ID": {"2026-12-01": "4.4"}},
                                    hostile cases (off by default):
                                    "answer_as": {"ID": "OTHER"}  a direct look at ID answers with
                                    OTHER's record (a hostile or mixed-up provider),
                                    "hide": [ID]  left out of listings, still answered by a direct look,
                                    "duplicate": [ID]  listed twice (the second copy named "… (copy)"),
                                    "refuse_snapshot": [ID]  AutoDL refuses that snapshot,
                                    "no_max_page": true  AutoDL's list answer without max_page,
                                    "autodl_page_size": n  AutoDL pages of n whatever was asked,
                                    "no_stock": n  AutoDL refuses the next n power_on calls for lack
                                    of stock, in the words community clients captured}
  POST  /_standin/offers           the market: {"offers": [neutral offer], "raw": [rows sent verbatim
                                    in the catalog's list], "many": n extra generated rows}
  GET   /_standin/requests         what was asked, in order (the key shown as "ok", "wrong" or "none")
  GET   /_standin/violations       requests that broke the documented contract

Neutral instance: {"id", "name", "state": running|stopped|starting|gone, "gpu", "count",
"price" (per hour, whole instance), "region", "created" (unix seconds), "started",
"ssh_host", "ssh_port", "ssh_user" (AutoDL's snapshot; root when absent), "password"}; Vast.ai interruptible: "bid" (per GPU-hour), "min_bid",
"outbid": true (meant to run, stopped; a bid at or above min_bid wins it back). The script's
"price_increases" holds Vast.ai's pending price increase rows as documented
(pending_price_increase_id, contract_id, old/new_gpu_costpersec, old/new_disk_ram_costpersec).

Neutral offer: {"id", "gpu" (the provider's GPU id/name), "count", "vram_gb", "price" (per
GPU-hour), "region", "stock": NONE|LOW|MEDIUM|HIGH, "cloud": SECURE|COMMUNITY (RunPod),
"min_bid", "storage_cost", "reliability"}. The script's "no_capacity" makes every create refuse
for capacity; "lose_create" creates the instance and drops the connection without an answer.

Usage: standin.py PROVIDER KEY   (prints the port it listens on, then serves until killed)
"""
import json
import sys
import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

PROVIDER, KEY = sys.argv[1], sys.argv[2]
SCHEMAS = json.load(open(__file__.rsplit("/", 1)[0] + "/schemas.json"))[PROVIDER]

lock = threading.Lock()
instances = {}
script = {"fail": [], "malformed": 0, "confirm_after": 1, "page_size": 25, "accumulate": "0",
          "charges": {}, "hide": [], "duplicate": [], "refuse_snapshot": [], "no_max_page": False,
          "answer_as": {}}
pending = {}  # id -> (target state, looks left)
requests_seen = []
violations = []
market = {"offers": [], "raw": [], "many": 0}
created = {"n": 0}


def iso(seconds):
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def check_shape(kind, value):
    """The answer carries every field the published schema marks required (schemas.json)."""
    for field in SCHEMAS["required"].get(kind, []):
        if field not in value:
            violations.append(f"stand-in answer {kind} lacks required {field}")


def render(inst):
    s, p = inst["state"], PROVIDER
    if p == "runpod":
        status = {"running": "RUNNING", "stopped": "EXITED", "starting": "STARTING",
                  "gone": "TERMINATED"}[s]
        actions = {"running": ["stop", "restart", "terminate"], "stopped": ["start", "terminate"],
                   "starting": ["terminate"], "gone": []}[s]
        direct = None
        if s == "running" and inst.get("ssh_port"):
            direct = {"host": inst.get("ssh_host", "127.0.0.1"), "port": inst["ssh_port"],
                      "username": "root",
                      "command": f"ssh root@{inst.get('ssh_host', '127.0.0.1')} -p {inst['ssh_port']}"}
        pod = {"id": inst["id"], "name": inst.get("name", ""), "image": "runpod/pytorch:2.8",
               "args": "", "disk": 50, "ports": ["22/tcp"], "env": {}, "registry": None,
               "status": status, "actions": actions, "mounts": {},
               "gpu": {"id": inst.get("gpu", "NVIDIA GeForce RTX 4090"), "count": inst.get("count", 1)},
               "cloud": "SECURE", "dataCenterId": inst.get("region", "US-KS-2"), "cudaVersion": "12.8",
               "ssh": {"proxy": None, "direct": direct}, "template": None,
               "cost": float(inst.get("price", 0)) if s == "running" else 0.0,
               "locked": False, "runtime": None, "globalNetworking": {"enabled": False},
               "createdAt": iso(inst.get("created")), "startedAt": iso(inst.get("started"))}
        check_shape("Pod", pod)
        return pod
    if p == "vast":
        actual = {"running": "running", "stopped": "stopped", "starting": "loading", "gone": "exited"}[s]
        intended = actual
        if inst.get("outbid"):
            # An interruptible instance that lost its GPU to a higher bid: meant to run, stopped.
            actual, intended = "exited", "running"
        item = {"id": int(inst["id"]), "actual_status": actual, "intended_status": intended,
                "is_bid": "bid" in inst, "min_bid": float(inst.get("min_bid", 0.2)),
                "cur_state": actual, "label": inst.get("name"), "gpu_name": inst.get("gpu", "RTX 4090"),
                "num_gpus": inst.get("count", 1), "dph_total": float(inst.get("price", 0)),
                "storage_cost": 0.1, "ssh_host": inst.get("ssh_host", "127.0.0.1"),
                "ssh_port": inst.get("ssh_port", 22), "public_ipaddr": None, "ports": {},
                "start_date": inst.get("created"), "geolocation": inst.get("region", "Texas, US")}
        check_shape("Instance", item)
        return item
    if p == "lambda":
        status = {"running": "active", "stopped": "active", "starting": "booting", "gone": "terminated"}[s]
        cents = int(round(float(inst.get("price", 0)) * 100))
        item = {"id": inst["id"], "name": inst.get("name"), "ip": inst.get("ssh_host", "127.0.0.1"),
                "status": status, "ssh_key_names": ["laptop"], "file_system_names": [],
                "region": {"name": inst.get("region", "us-east-1"), "description": "Virginia, USA"},
                "instance_type": {"name": "gpu_1x_a100", "description": "1x A100 (40 GB SXM4)",
                                  "gpu_description": inst.get("gpu", "A100 (40 GB SXM4)"),
                                  "price_cents_per_hour": cents,
                                  "specs": {"vcpus": 30, "memory_gib": 200, "storage_gib": 512,
                                            "gpus": inst.get("count", 1)}},
                "hostname": "h", "is_reserved": False}
        check_shape("Instance", item)
        return item
    status = {"running": "running", "stopped": "shutdown", "starting": "starting", "gone": "released"}[s]
    return {"uuid": inst["id"], "name": inst.get("name", ""), "status": status,
            "gpu_name": inst.get("gpu", "RTX 4090"), "gpu_num": inst.get("count", 1),
            "region_name": inst.get("region", "西北B区")}


def listed():
    """What a listing shows: every instance but the hidden ones, the duplicated ones twice."""
    out = [i for i in instances.values() if i["id"] not in script["hide"]]
    for ident in script["duplicate"]:
        if ident in instances:
            out.append(dict(instances[ident], name=f"{instances[ident].get('name', '')} (copy)"))
    return out


def autodl_snapshot(inst):
    snap = {"instance_uuid": inst["id"], "status": render(inst)["status"],
            "payg_price": int(round(float(inst.get("price", 0)) * 1000)),
            "gpu_name": inst.get("gpu", "RTX 4090"), "gpu_num": inst.get("count", 1),
            "region_name": inst.get("region", "西北B区"),
            "ssh_command": f"ssh -p {inst.get('ssh_port', 22)} {inst.get('ssh_user', 'root')}@{inst.get('ssh_host', '127.0.0.1')}",
            "root_password": inst.get("password", "")}
    check_shape("Snapshot", snap)
    return snap


def advance(ident):
    """A power request takes effect after `confirm_after` looks, as a real provider's does."""
    if ident in pending:
        target, left = pending[ident]
        if left <= 0:
            if target == "gone":
                instances.pop(ident, None)
            else:
                instances[ident]["state"] = target
            del pending[ident]
        else:
            pending[ident] = (target, left - 1)


def all_offers():
    """The neutral offers plus `many` generated ones (a catalog of any size)."""
    extra = [{"id": str(900000 + i), "gpu": "RTX 3090", "count": 1, "vram_gb": 24,
              "price": 0.2 + (i % 500) / 1000, "region": f"Region {i % 40}", "stock": "HIGH"}
             for i in range(int(market.get("many") or 0))]
    return list(market["offers"]) + extra


def runpod_catalog():
    gpus = []
    for o in all_offers():
        cloud = o.get("cloud", "SECURE")
        price = float(o["price"])
        stock = o.get("stock", "HIGH")
        gpus.append({"id": o["gpu"], "name": o.get("name", o["gpu"]), "manufacturer": "Nvidia",
                     "memory": o.get("vram_gb", 24),
                     "secure": cloud == "SECURE", "community": cloud == "COMMUNITY",
                     "price": {"secure": price if cloud == "SECURE" else 0.0,
                               "community": price if cloud == "COMMUNITY" else 0.0},
                     "maxCount": {"secure": o.get("count", 1), "community": o.get("count", 1)},
                     "availability": stock,
                     "dataCenters": ([{"id": o["region"], "name": o["region"], "availability": stock}]
                                     if o.get("region") else [])})
    return {"gpus": gpus + market["raw"]}


def vast_rows(body):
    rows = []
    wanted = ((body or {}).get("id") or {}).get("eq")
    for o in all_offers():
        if wanted is not None and str(wanted) != str(o["id"]):
            continue
        count = o.get("count", 1)
        total = round(float(o["price"]) * count, 6)
        row = {"id": int(o["id"]), "ask_contract_id": int(o["id"]), "gpu_name": o["gpu"],
               "num_gpus": count, "gpu_ram": o.get("vram_gb", 24) * 1024, "dph_total": total,
               "dph_base": total, "storage_cost": o.get("storage_cost", 0.1),
               "reliability2": o.get("reliability", 0.99), "geolocation": o.get("region"),
               "rentable": True, "rented": False, "verified": True, "cuda_max_good": 12.8}
        if o.get("min_bid") is not None:
            row["min_bid"] = float(o["min_bid"])
        rows.append(row)
    rows.sort(key=lambda r: r["dph_total"])
    limit = int((body or {}).get("limit") or 64)
    return {"offers": rows[:limit] + (market["raw"] if wanted is None else [])}


def lambda_types():
    data = {}
    for o in all_offers():
        count = o.get("count", 1)
        vram = o.get("vram_gb", 40)
        regions = ([{"name": o["region"], "description": o["region"]}]
                   if o.get("region") and o.get("stock", "HIGH") != "NONE" else [])
        entry = data.setdefault(o["id"], {"instance_type": {
            "name": o["id"], "description": f"{count}x {o['gpu']} ({vram} GB)",
            "gpu_description": f"{o['gpu']} ({vram} GB)",
            "price_cents_per_hour": int(round(float(o["price"]) * count * 100)),
            "specs": {"vcpus": 8 * count, "memory_gib": 64 * count, "storage_gib": 512, "gpus": count}},
            "regions_with_capacity_available": []})
        entry["regions_with_capacity_available"] += regions
    for i, raw in enumerate(market["raw"]):
        data[f"raw_{i}"] = raw
    return {"data": data}


def take_offer(match):
    for o in market["offers"]:
        if match(o):
            return o
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *_):
        pass

    def reply(self, status, body, raw=None):
        data = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            violations.append(f"{self.command} {self.path}: body is not JSON")
            return None

    def do_GET(self):
        self.handle_any()

    def do_POST(self):
        self.handle_any()

    def do_PUT(self):
        self.handle_any()

    def do_PATCH(self):
        self.handle_any()

    def do_DELETE(self):
        self.handle_any()

    def handle_any(self):
        url = urlparse(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        body = self.body()
        if not url.path.startswith("/_standin/") and script.get("delay"):
            time.sleep(float(script["delay"]))
        with lock:
            if url.path.startswith("/_standin/"):
                return self.control(url.path, body)
            auth = self.headers.get("Authorization", "")
            expected = KEY if PROVIDER == "autodl" else f"Bearer {KEY}"
            requests_seen.append({"method": self.command, "path": url.path, "query": query,
                                  "key": "ok" if auth == expected else ("none" if not auth else "wrong"),
                                  "body": body, "content_type": self.headers.get("Content-Type")})
            # Vast.ai's offer search answers without a key.
            keyless = PROVIDER == "vast" and url.path == "/api/v0/bundles/" and not auth
            if body is not None and "application/json" not in (self.headers.get("Content-Type") or ""):
                violations.append(f"{self.command} {url.path}: a JSON body without its content type")
            if script["fail"] and script["fail"][0].get("after", 0) > 0:
                script["fail"][0]["after"] -= 1
            elif script["fail"]:
                failure = script["fail"][0]
                failure["times"] -= 1
                if failure["times"] <= 0:
                    script["fail"].pop(0)
                return self.reply(failure["status"], failure.get("body", {"detail": "stand-in failure"}))
            if auth != expected and not keyless:
                if PROVIDER == "autodl" and auth == f"Bearer {KEY}":
                    violations.append("AutoDL's token was sent with a Bearer prefix")
                return self.refuse_key()
            if script["malformed"] > 0:
                script["malformed"] -= 1
                return self.reply(200, None, raw=b'{"pods": [ {"id": "p1", ')
            return getattr(self, PROVIDER)(self.command, url.path, query, body)

    def refuse_key(self):
        return self.reply(401, {
            "runpod": {"title": "Unauthorized", "status": 401, "detail": "invalid api key"},
            "vast": {"success": False, "error": "auth_error", "msg": "Invalid user key"},
            "lambda": {"error": {"code": "global/invalid-api-key", "message": "API key was invalid, expired, or deleted."}},
            "autodl": {"code": "AuthorizeFailed", "msg": "token 无效或已过期", "data": None},
        }[PROVIDER])

    def control(self, path, body):
        if path == "/_standin/instances" and self.command == "POST":
            instances.clear()
            for inst in body or []:
                instances[str(inst["id"])] = dict(inst, id=str(inst["id"]))
            return self.reply(200, {"ok": True})
        if path.startswith("/_standin/instances/") and self.command == "PATCH":
            ident = path.rsplit("/", 1)[1]
            if (body or {}).get("state") == "gone":
                instances.pop(ident, None)
            else:
                instances[ident].update(body or {})
            return self.reply(200, {"ok": True})
        if path == "/_standin/offers":
            market.update({"offers": [], "raw": [], "many": 0})
            market.update(body or {})
            return self.reply(200, {"ok": True})
        if path == "/_standin/script":
            script.update(body or {})
            return self.reply(200, {"ok": True})
        if path == "/_standin/requests":
            return self.reply(200, requests_seen)
        if path == "/_standin/violations":
            return self.reply(200, violations)
        return self.reply(404, {"detail": "no such control"})

    def create(self, inst):
        """Record a new instance; None when the answer is to be lost (the instance exists)."""
        created["n"] += 1
        instances[inst["id"]] = inst
        if script.get("lose_create"):
            script["lose_create"] = False
            self.close_connection = True
            return None
        return inst

    def no_capacity(self):
        return bool(script.get("no_capacity"))

    def unexpected(self, method, path):
        violations.append(f"{method} {path}: not a documented {PROVIDER} call")
        return self.reply(404, {"detail": "not found"})

    def power(self, ident, target):
        if ident not in instances:
            return False
        pending[ident] = (target, int(script["confirm_after"]))
        if script["confirm_after"] == 0:
            advance(ident)
        return True

    # --- RunPod REST v2 -------------------------------------------------------------
    def runpod(self, method, path, query, body):
        parts = path.strip("/").split("/")
        if method == "GET" and path == "/v2/pods":
            for ident in list(pending):
                advance(ident)
            pods = [render(i) for i in listed()]
            answer = {"pods": pods}
            check_shape("ListPodsResponse", answer)
            return self.reply(200, answer)
        if len(parts) == 3 and parts[:2] == ["v2", "pods"] and method in ("GET", "DELETE"):
            ident = parts[2]
            if method == "DELETE":
                return self.reply(204, None) if self.power(ident, "gone") else self.reply(
                    404, {"title": "Not Found", "status": 404, "detail": "pod not found"})
            advance(ident)
            shown = script["answer_as"].get(ident, ident)
            if shown not in instances:
                return self.reply(404, {"title": "Not Found", "status": 404, "detail": "pod not found"})
            return self.reply(200, render(instances[shown]))
        if len(parts) == 4 and parts[:2] == ["v2", "pods"] and parts[3] == "action" and method == "POST":
            ident, action = parts[2], (body or {}).get("action")
            if set((body or {}).keys()) != {"action"} or action not in ("start", "stop", "restart", "terminate"):
                violations.append(f"POST {path}: body {body} is not a PodActionRequest")
                return self.reply(400, {"title": "Bad Request", "status": 400, "detail": "invalid body"})
            if ident not in instances:
                return self.reply(404, {"title": "Not Found", "status": 404, "detail": "pod not found"})
            state = instances[ident]["state"]
            allowed = {"running": {"stop", "restart", "terminate"}, "stopped": {"start", "terminate"}}.get(state, {"terminate"})
            if action not in allowed:
                return self.reply(409, {"title": "Conflict", "status": 409,
                                        "detail": f"cannot {action} a pod in status {render(instances[ident])['status']}"})
            self.power(ident, {"start": "running", "stop": "stopped", "terminate": "gone"}[action])
            return self.reply(200, render(instances[ident]))
        if method == "GET" and path == "/v2/catalog/gpus":
            if query.get("include") != "AVAILABILITY" or query.get("product") != "POD":
                violations.append(f"GET {path}: without include=AVAILABILITY&product=POD")
            return self.reply(200, runpod_catalog())
        if method == "POST" and path == "/v2/pods":
            allowed = {"name", "image", "gpu", "cloud", "disk", "mounts", "ports", "env", "startSsh",
                       "dataCenterIds", "templateId", "registry", "args"}
            extra = set((body or {}).keys()) - allowed
            if extra or not isinstance(body, dict) or not {"name", "image", "gpu"} <= set(body):
                violations.append(f"POST /v2/pods: body keys {sorted((body or {}).keys())} break the v2 schema")
                return self.reply(422, {"title": "Unprocessable Entity", "status": 422,
                                        "detail": f"unknown or missing fields {sorted(extra)}"})
            if self.no_capacity():
                return self.reply(400, {"title": "Bad Request", "status": 400,
                                        "detail": "There are no longer any instances available with the requested specifications."})
            gpu = body["gpu"].get("id")
            offer = take_offer(lambda o: o["gpu"] == gpu) or {"price": 0.5}
            count = body["gpu"].get("count", 1)
            inst = self.create({"id": f"pod{created['n'] + 1}x", "name": body["name"], "state": "starting",
                                "gpu": gpu, "count": count, "price": float(offer["price"]) * count,
                                "region": (body.get("dataCenterIds") or ["US-KS-2"])[0],
                                "created": int(time.time())})
            if inst is None:
                return None
            pod = render(inst)
            pod["cost"] = float(inst["price"])
            return self.reply(201, pod)
        if method == "GET" and path == "/v2/billing/pods":
            for field in ("startTime", "endTime", "bucketSize", "podId"):
                if field not in query:
                    violations.append(f"GET {path}: no {field}")
            pod = query.get("podId")
            records = [{"startTime": f"{day}T00:00:00Z", "endTime": f"{day}T23:59:59Z", "podId": pod,
                        "totalAmount": float(amount), "gpuAmount": float(amount), "cpuAmount": 0.0,
                        "diskAmount": 0.0}
                       for day, amount in script["charges"].get(pod, {}).items()]
            return self.reply(200, {"records": records, "metadata": {"query": query, "recordCount": len(records),
                                                                     "uniquePodCount": 1, "totals": {}}})
        return self.unexpected(method, path)

    # --- Vast.ai --------------------------------------------------------------------
    def vast(self, method, path, query, body):
        parts = path.strip("/").split("/")
        if method == "GET" and path == "/api/v1/instances/":
            for ident in list(pending):
                advance(ident)
            limit = int(query.get("limit", 25))
            if limit > 25:
                violations.append("GET /api/v1/instances/: limit over the documented 25")
            size = min(limit, int(script["page_size"]))
            ordered = sorted(listed(), key=lambda i: int(i["id"]))
            start = int(query.get("after_token", "0") or 0)
            page = ordered[start:start + size]
            nxt = str(start + size) if start + size < len(ordered) else None
            return self.reply(200, {"success": True, "instances_found": len(page),
                                    "total_instances": len(ordered), "next_token": nxt,
                                    "instances": [render(i) for i in page]})
        if path == "/api/v0/instances/pending-price-increases/" and method == "GET":
            rows = script.get("price_increases", [])
            for row in rows:
                check_shape("PendingPriceIncrease", row)
            return self.reply(200, {"success": True, "count": len(rows), "truncated": False,
                                    "pending_price_increases": rows})
        if path in ("/api/v0/instances/accept-price-increase/",
                    "/api/v0/instances/reject-price-increase/") and method == "PUT":
            # Vast's model forbids any other key (extra='forbid').
            if not isinstance(body, dict) or set(body) != {"pending_price_increase_id"} \
                    or not isinstance(body["pending_price_increase_id"], int):
                violations.append(f"PUT {path}: body {body} is not exactly {{pending_price_increase_id: int}}")
                return self.reply(422, {"success": False, "error": "invalid_args", "msg": "bad body"})
            rows = script.get("price_increases", [])
            row = next((r for r in rows if r["pending_price_increase_id"] == body["pending_price_increase_id"]), None)
            if row is None:
                return self.reply(404, {"success": False, "error": "no_pending_price_increase",
                                        "msg": "No pending price increase"})
            rows.remove(row)
            if "accept" in path and str(row["contract_id"]) in instances:
                inst = instances[str(row["contract_id"])]
                inst["price"] = round((row["new_gpu_costpersec"] + row["new_disk_ram_costpersec"]) * 3600, 6)
            return self.reply(200, {"success": True})
        if len(parts) == 5 and parts[:4] == ["api", "v0", "instances", "bid_price"] and method == "PUT":
            ident = parts[4]
            if not path.endswith("/") or not isinstance(body, dict) or set(body) != {"client_id", "price"} \
                    or body["client_id"] != "me" or not isinstance(body["price"], (int, float)):
                violations.append(f"PUT {path}: body {body} is not {{client_id: \"me\", price: number}}")
                return self.reply(400, {"success": False, "error": "invalid_args", "msg": "bad body"})
            if ident not in instances:
                return self.reply(404, {"success": False, "error": "no_such_instance", "msg": "not found"})
            inst = instances[ident]
            inst["bid"] = body["price"]
            if inst.get("outbid") and body["price"] >= float(inst.get("min_bid", 0.2)):
                inst["outbid"] = False
            return self.reply(200, {"success": True})
        if len(parts) == 4 and parts[:3] == ["api", "v0", "instances"] and path.endswith("/"):
            ident = parts[3]
            if method == "GET":
                advance(ident)
                shown = script["answer_as"].get(ident, ident)
                return self.reply(200, {"instances": render(instances[shown]) if shown in instances else None})
            if method == "PUT":
                state = (body or {}).get("state")
                if state not in ("running", "stopped"):
                    violations.append(f"PUT {path}: body {body} has no valid state")
                    return self.reply(400, {"success": False, "error": "invalid_args", "msg": "bad state"})
                ok = self.power(ident, state)
                return self.reply(200, {"success": ok} if ok else {"success": False, "msg": "no such instance"})
            if method == "DELETE":
                ok = self.power(ident, "gone")
                return self.reply(200, {"success": ok, "msg": "Instance destroyed successfully"})
        if method == "POST" and path == "/api/v0/bundles/":
            if not isinstance(body, dict):
                violations.append("POST /api/v0/bundles/: no search body")
            return self.reply(200, vast_rows(body))
        if len(parts) == 4 and parts[:3] == ["api", "v0", "asks"] and method == "PUT" and path.endswith("/"):
            ask = parts[3]
            if not isinstance(body, dict) or body.get("client_id") != "me" or "image" not in body:
                violations.append(f"PUT {path}: body {body} lacks client_id \"me\" or image")
                return self.reply(400, {"success": False, "error": "invalid_args", "msg": "bad body"})
            if not isinstance(body.get("env", {}), dict):
                violations.append(f"PUT {path}: env is not an object")
            offer = take_offer(lambda o: str(o["id"]) == ask)
            if offer is None:
                return self.reply(404, {"success": False, "error": "no_such_ask",
                                        "msg": "Instance type no longer available"})
            market["offers"].remove(offer)
            count = offer.get("count", 1)
            price = float(body["price"]) if "price" in body else float(offer["price"]) * count
            ident = str(5000 + created["n"] + 1)
            inst = self.create({"id": ident, "name": body.get("label", ""), "state": "starting",
                                "gpu": offer["gpu"], "count": count, "price": price,
                                "region": offer.get("region"), "created": int(time.time())})
            if inst is None:
                return None
            return self.reply(200, {"success": True, "new_contract": int(ident)})
        if method == "GET" and path == "/api/v0/charges/":
            try:
                day_filter = json.loads(query["select_filters"])["day"]
                gte, lte = int(day_filter["gte"]), int(day_filter["lte"])
            except (KeyError, ValueError, TypeError):
                violations.append("GET /api/v0/charges/: select_filters without a day range")
                return self.reply(400, {"success": False, "error": "invalid_args", "msg": "day range required"})
            results = []
            for ident, days in script["charges"].items():
                for day, amount in days.items():
                    t = int(datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=timezone.utc).timestamp())
                    if gte <= t <= lte:
                        results.append({"start": t, "end": t + 86399, "type": "instance",
                                        "source": f"instance-{ident}", "amount": float(amount),
                                        "description": f"Instance {ident} Charges", "items": []})
            return self.reply(200, {"success": True, "count": len(results), "total": len(results),
                                    "next_token": None, "results": results})
        return self.unexpected(method, path)

    # --- Lambda Cloud ---------------------------------------------------------------
    def lambda_(self, method, path, query, body):
        if method == "GET" and path == "/api/v1/instances":
            for ident in list(pending):
                advance(ident)
            return self.reply(200, {"data": [render(i) for i in listed()]})
        if method == "GET" and path.startswith("/api/v1/instances/"):
            ident = path.rsplit("/", 1)[1]
            advance(ident)
            if ident not in instances:
                return self.reply(404, {"error": {"code": "global/object-does-not-exist", "message": "Instance not found"}})
            return self.reply(200, {"data": render(instances[ident])})
        if method == "GET" and path == "/api/v1/instance-types":
            return self.reply(200, lambda_types())
        if method == "GET" and path == "/api/v1/ssh-keys":
            return self.reply(200, {"data": script.setdefault("ssh_keys", [])})
        if method == "POST" and path == "/api/v1/ssh-keys":
            if not isinstance(body, dict) or not body.get("name") or not body.get("public_key"):
                violations.append("POST /api/v1/ssh-keys: no name or public_key")
                return self.reply(400, {"error": {"code": "global/invalid-parameters", "message": "bad body"}})
            key = {"id": f"key{len(script.setdefault('ssh_keys', [])) + 1}", "name": body["name"],
                   "public_key": body["public_key"]}
            script["ssh_keys"].append(key)
            return self.reply(200, {"data": key})
        if method == "POST" and path == "/api/v1/instance-operations/launch":
            need = {"region_name", "instance_type_name", "ssh_key_names"}
            if not isinstance(body, dict) or not need <= set(body) or not isinstance(body.get("ssh_key_names"), list):
                violations.append(f"POST {path}: body {body} lacks {sorted(need)}")
                return self.reply(400, {"error": {"code": "global/invalid-parameters", "message": "bad body"}})
            known = {k["name"] for k in script.get("ssh_keys", [])}
            if not set(body["ssh_key_names"]) <= known:
                return self.reply(400, {"error": {"code": "global/invalid-parameters",
                                                  "message": "Unknown SSH key name"}})
            if self.no_capacity():
                return self.reply(400, {"error": {"code": "instance-operations/launch/insufficient-capacity",
                                                  "message": "Not enough capacity to fulfill launch request."}})
            offer = take_offer(lambda o: o["id"] == body["instance_type_name"]) or {"price": 1, "gpu": "A100"}
            count = offer.get("count", 1)
            ident = f"0920{created['n'] + 1:04d}abcd"
            inst = self.create({"id": ident, "name": body.get("name"), "state": "starting",
                                "gpu": offer["gpu"], "count": count, "price": float(offer["price"]) * count,
                                "region": body["region_name"], "created": int(time.time())})
            if inst is None:
                return None
            return self.reply(200, {"data": {"instance_ids": [ident]}})
        if method == "POST" and path == "/api/v1/instance-operations/terminate":
            ids = (body or {}).get("instance_ids")
            if not isinstance(ids, list):
                violations.append(f"POST {path}: no instance_ids list")
                return self.reply(400, {"error": {"code": "global/invalid-parameters", "message": "bad body"}})
            done = [render(instances[i]) for i in ids if self.power(i, "gone")]
            return self.reply(200, {"data": {"terminated_instances": done}})
        return self.unexpected(method, path)

    # --- AutoDL Pro -----------------------------------------------------------------
    def autodl(self, method, path, query, body):
        pro = "/api/v1/dev/instance/pro/"
        ok = lambda data: self.reply(200, {"code": "Success", "msg": "", "data": data})
        if method == "POST" and path == pro + "list":
            for ident in list(pending):
                advance(ident)
            if not isinstance(body, dict) or "page_index" not in body or "page_size" not in body:
                violations.append(f"POST {path}: no page_index/page_size")
            size = int(script.get("autodl_page_size") or (body or {}).get("page_size", 10))
            index = int((body or {}).get("page_index", 1))
            ordered = sorted(listed(), key=lambda i: i["id"])
            page = ordered[(index - 1) * size:index * size]
            max_page = max(1, -(-len(ordered) // size))
            answer = {"list": [render(i) for i in page], "page_index": index, "page_size": size,
                      "max_page": max_page, "result_total": len(ordered)}
            if script["no_max_page"]:
                del answer["max_page"]
                del answer["result_total"]
            return ok(answer)
        if method == "GET" and path in (pro + "status", pro + "snapshot"):
            ident = query.get("instance_uuid")
            advance(ident)
            if ident not in instances:
                return self.reply(200, {"code": "InstanceNotFound", "msg": "实例不存在", "data": None})
            if path.endswith("status"):
                return ok(render(instances[ident])["status"])
            if ident in script["refuse_snapshot"]:
                return self.reply(200, {"code": "InternalError", "msg": "系统繁忙，请稍后再试", "data": None})
            return ok(autodl_snapshot(instances[ident]))
        if method == "POST" and path in (pro + "power_on", pro + "power_off", pro + "release"):
            ident = (body or {}).get("instance_uuid")
            if path.endswith("power_on") and (body or {}).get("payload") != "gpu":
                violations.append("power_on without payload \"gpu\"")
            if ident not in instances:
                return self.reply(200, {"code": "InstanceNotFound", "msg": "实例不存在", "data": None})
            if path.endswith("power_on") and int(script.get("no_stock", 0)) > 0:
                script["no_stock"] = int(script["no_stock"]) - 1
                return self.reply(200, {"code": "InternalError",
                                        "msg": "当前算力规格暂无库存, 请修改配置或稍等再试", "data": None})
            if path.endswith("release") and instances[ident]["state"] != "stopped":
                return self.reply(200, {"code": "InstanceNotShutdown", "msg": "请先关机再释放", "data": None})
            target = {"power_on": "running", "power_off": "stopped", "release": "gone"}[path.rsplit("/", 1)[1]]
            self.power(ident, target)
            return ok(None)
        if method == "POST" and path == pro + "create":
            return self.autodl_create(body if isinstance(body, dict) else {}, ok)
        if method == "POST" and path == "/api/v1/dev/wallet/balance":
            return ok({"assets": 100000, "accumulate": int(round(float(script["accumulate"]) * 1000)),
                       "voucher_balance": 0})
        return self.unexpected(method, path)


def autodl_create(self, body, ok):
    """AutoDL Pro create: the documented body (schemas.json "create"), the spec as a market
    offer's id ("price" per GPU-hour, "stock": NONE refuses for lack of stock), the new
    instance running at once, its uuid as a bare string."""
    shape = SCHEMAS["create"]
    for field in shape["required"]:
        if field not in body:
            violations.append(f"AutoDL create without {field}")
    for field in body:
        if field not in shape["required"] + shape["optional"]:
            violations.append(f"AutoDL create with an undocumented field {field}")
    count, disk, cuda = body.get("req_gpu_amount"), body.get("expand_system_disk_by_gb"), body.get("cuda_v_from")
    if not (isinstance(count, int) and 1 <= count <= 4) or not (isinstance(disk, int) and 0 <= disk <= 500) \
            or not (isinstance(cuda, int) and cuda >= 100):
        violations.append(f"AutoDL create with a bad count, disk or CUDA: {count!r} {disk!r} {cuda!r}")
        return self.reply(200, {"code": "RequestParameterIsWrong", "msg": "请求参数错误", "data": None})
    if script.get("real_name_missing"):
        return self.reply(200, {"code": "TORealName", "msg": "未完成实名认证,认证后才可使用", "data": None})
    spec = take_offer(lambda o: o["id"] == body.get("gpu_spec_uuid"))
    if spec is None:
        return self.reply(200, {"code": "RequestParameterIsWrong", "msg": "请求参数错误", "data": None})
    if self.no_capacity() or spec.get("stock") == "NONE":
        return self.reply(200, {"code": "InternalError",
                                "msg": "当前算力规格暂无库存, 请修改配置或稍等再试", "data": None})
    ident = f"pro-{created['n'] + 1:012x}"
    regions = body.get("data_center_list") or [spec.get("region", "西北B区")]
    inst = {"id": ident, "name": body.get("instance_name", ""), "state": "running",
            "gpu": spec.get("gpu", "RTX 4090"), "count": count,
            "price": round(float(spec.get("price", 1)) * count, 3), "region": regions[0],
            "created": int(time.time()), "started": int(time.time()),
            "ssh_host": spec.get("ssh_host", "127.0.0.1"), "ssh_port": spec.get("ssh_port", 22),
            "ssh_user": spec.get("ssh_user", "root"),
            "password": "stand-in-root", "start_command": body.get("start_command")}
    if self.create(inst) is None:
        return None
    return ok(ident)


Handler.autodl_create = autodl_create
setattr(Handler, "lambda", Handler.lambda_)

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
