"""Stand-in for `ollama serve`: the parts of its HTTP API Leasehold reads. The model it loads
fits only three quarters into VRAM, so the check must report CPU offload."""
import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SIZE = 8_000_000_000
SIZE_VRAM = 6_000_000_000
loaded = []


class Api(BaseHTTPRequestHandler):
    def reply(self, body, status=200):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/api/version":
            self.reply({"version": "0.5.7"})
        elif self.path == "/api/ps":
            self.reply({"models": [{"name": m, "model": m, "size": SIZE, "size_vram": SIZE_VRAM} for m in loaded]})
        else:
            self.reply({"error": "not found"}, 404)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if self.path != "/api/generate":
            self.reply({"error": "not found"}, 404)
            return
        model = body.get("model", "")
        if model not in loaded:
            loaded.append(model)
        # 120 tokens in 4 s: 30.0 tokens per second.
        self.reply({"model": model, "response": "Hello from the stand-in model.", "done": True,
                    "eval_count": 120, "eval_duration": 4_000_000_000})

    def log_message(self, *args):
        pass


host, _, port = os.environ.get("OLLAMA_HOST", "127.0.0.1:11434").rpartition(":")
ThreadingHTTPServer((host or "127.0.0.1", int(port)), Api).serve_forever()
