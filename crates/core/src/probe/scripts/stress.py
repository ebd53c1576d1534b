# Leasehold stress test: timed square matmuls on every visible GPU, fp16 then bf16.
# Warm-up first, then batches until the time budget runs out; prints one line
# "@@leasehold:stress <json>" with the TFLOPS of each batch. Uses only the public torch API.
import json
import sys
import time

SIZE = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 4.0
BATCH = 5
result = {"size": SIZE, "devices": []}
try:
    import torch
except Exception as exc:
    result["error"] = "%s: %s" % (type(exc).__name__, exc)
    print("@@leasehold:stress " + json.dumps(result))
    sys.exit(0)

if not torch.cuda.is_available():
    result["error"] = "torch.cuda.is_available() is False"
    print("@@leasehold:stress " + json.dumps(result))
    sys.exit(0)

flops = 2.0 * SIZE * SIZE * SIZE
for index in range(torch.cuda.device_count()):
    device = {"index": index, "name": torch.cuda.get_device_name(index), "runs": []}
    dtypes = [("float16", torch.float16)]
    try:
        if torch.cuda.is_bf16_supported():
            dtypes.append(("bfloat16", torch.bfloat16))
    except Exception:
        pass
    for label, dtype in dtypes:
        run = {"dtype": label, "tflops": [], "error": None}
        try:
            with torch.cuda.device(index):
                a = torch.randn(SIZE, SIZE, device="cuda", dtype=dtype)
                b = torch.randn(SIZE, SIZE, device="cuda", dtype=dtype)
                for _ in range(3):
                    torch.matmul(a, b)
                torch.cuda.synchronize()
                deadline = time.time() + SECONDS
                while time.time() < deadline and len(run["tflops"]) < 200:
                    start = time.perf_counter()
                    for _ in range(BATCH):
                        c = torch.matmul(a, b)
                    torch.cuda.synchronize()
                    elapsed = time.perf_counter() - start
                    if elapsed > 0:
                        run["tflops"].append(BATCH * flops / elapsed / 1e12)
                finite = bool(torch.isfinite(c.float()).all().item())
                if not finite:
                    run["error"] = "the result contains NaN or Inf"
                del a, b, c
                torch.cuda.empty_cache()
        except Exception as exc:
            run["error"] = "%s: %s" % (type(exc).__name__, exc)
        device["runs"].append(run)
    result["devices"].append(device)
print("@@leasehold:stress " + json.dumps(result))
