# Leasehold torch probe: what PyTorch sees, and one tiny real kernel launch.
# Prints one line "@@leasehold:torch <json>". Uses only the public torch API.
import json
import sys
import warnings

result = {"python": sys.executable, "python_version": sys.version.split()[0]}
try:
    import torch
except Exception as exc:  # ImportError, or a broken install raising something else
    result["import_error"] = "%s: %s" % (type(exc).__name__, exc)
    print("@@leasehold:torch " + json.dumps(result))
    sys.exit(0)

result["version"] = str(torch.__version__)
result["cuda_build"] = getattr(torch.version, "cuda", None)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        result["available"] = bool(torch.cuda.is_available())
        count = int(torch.cuda.device_count())
        result["device_count"] = count
        devices = []
        for i in range(count):
            device = {"name": torch.cuda.get_device_name(i)}
            major, minor = torch.cuda.get_device_capability(i)
            device["capability"] = "%d.%d" % (major, minor)
            try:
                device["total_memory_mib"] = int(torch.cuda.get_device_properties(i).total_memory // (1024 * 1024))
            except Exception:
                pass
            devices.append(device)
        result["devices"] = devices
        if count:
            result["arch_list"] = list(torch.cuda.get_arch_list())
        if result["available"]:
            try:
                x = torch.ones(1024, device="cuda")
                total = float((x * 2).sum().item())
                torch.cuda.synchronize()
                result["kernel"] = {"ok": total == 2048.0, "error": None if total == 2048.0 else "wrong result %s" % total}
            except Exception as exc:
                result["kernel"] = {"ok": False, "error": "%s: %s" % (type(exc).__name__, exc)}
    except Exception as exc:
        result["cuda_error"] = "%s: %s" % (type(exc).__name__, exc)
    result["warnings"] = [str(w.message) for w in caught]
print("@@leasehold:torch " + json.dumps(result))
