//! The recipes themselves. Bash here is fixed text; every option reaches it as a variable set
//! by [`Script::var`] (quoted). The steps follow the seeds' install instructions (see each
//! function), made idempotent and self-checking.

use super::script::Script;
use super::{InstallError, InstallFacts, Recipe, RecipeOptions};
use crate::catalog::{choose_torch_wheel, TorchWheelRequest};

pub(crate) fn build(
    recipe: Recipe,
    options: &RecipeOptions,
    facts: &InstallFacts,
) -> Result<String, InstallError> {
    let get = |key: &str| options.get(recipe, key);
    let script = match recipe {
        Recipe::Mirrors => mirrors(options, facts),
        Recipe::Miniconda => miniconda(&get),
        Recipe::Pytorch => pytorch(options, facts)?,
        Recipe::Pip => pip(&get),
        Recipe::Ollama => ollama(&get, facts),
        Recipe::Docker => docker(&get, facts)?,
        Recipe::Vllm => vllm(options, facts),
        Recipe::Tgi => tgi(&get, facts)?,
        Recipe::PerGpu => per_gpu(&get),
    };
    Ok(script.render())
}

fn pip_index(name: &str) -> &'static str {
    match name {
        "tsinghua" => "https://pypi.tuna.tsinghua.edu.cn/simple",
        "ustc" => "https://mirrors.ustc.edu.cn/pypi/simple",
        "aliyun" => "https://mirrors.aliyun.com/pypi/simple/",
        _ => "https://pypi.org/simple",
    }
}

/// `.condarc` for a conda mirror (fixed text; the seed's Tsinghua main + free channels).
fn condarc(name: &str) -> String {
    let base = match name {
        "tsinghua" => "https://mirrors.tuna.tsinghua.edu.cn/anaconda",
        "ustc" => "https://mirrors.ustc.edu.cn/anaconda",
        "aliyun" => "https://mirrors.aliyun.com/anaconda",
        _ => return "channels:\n  - defaults\nshow_channel_urls: true\n".to_owned(),
    };
    format!(
        "channels:\n  - defaults\nshow_channel_urls: true\ndefault_channels:\n  - {base}/pkgs/main\n  - {base}/pkgs/free\n  - {base}/pkgs/r\ncustom_channels:\n  conda-forge: {base}/cloud\n  pytorch: {base}/cloud\n  nvidia: {base}/cloud\n"
    )
}

fn hf_endpoint(name: &str) -> &'static str {
    match name {
        "hf-mirror" => "https://hf-mirror.com",
        _ => "",
    }
}

/// Seed 004 §2.3: conda + Tsinghua channels, `show_channel_urls`; pip with `-i` Tsinghua.
fn mirrors(options: &RecipeOptions, facts: &InstallFacts) -> Script {
    let pip = options
        .given("pip")
        .map(str::to_owned)
        .or_else(|| facts.fastest_pip.clone())
        .unwrap_or_else(|| "official".to_owned());
    let conda = options.given("conda").map_or_else(
        || {
            if pip == "keep" {
                "official".to_owned()
            } else {
                pip.clone()
            }
        },
        str::to_owned,
    );
    let hf = options
        .given("hf")
        .map(str::to_owned)
        .or_else(|| facts.fastest_hf.clone())
        .unwrap_or_else(|| "official".to_owned());
    let mut s = Script::new("mirrors");
    s.note("Writes ~/.config/pip/pip.conf, ~/.condarc and HF_ENDPOINT in ~/.bashrc; keeps one backup of each.");
    s.var("LH_PIP", &pip)
        .var("LH_PIP_URL", pip_index(&pip))
        .var("LH_CONDA", &conda)
        .var("LH_CONDARC", &condarc(&conda))
        .var("LH_HF", &hf)
        .var("LH_HF_URL", hf_endpoint(&hf));
    s.step(
        "pip index",
        r#"if [ "$LH_PIP" = keep ]; then lh_skip "pip index left as it is"; else
  conf="$HOME/.config/pip/pip.conf"
  mkdir -p "$(dirname "$conf")"
  printf '[global]\nindex-url = %s\ntimeout = 60\n' "$LH_PIP_URL" > "$conf.new"
  if [ -f "$conf" ] && cmp -s "$conf" "$conf.new"; then rm -f "$conf.new"; lh_skip "pip already uses $LH_PIP_URL"
  else
    [ ! -f "$conf" ] || [ -f "$conf.leasehold-backup" ] || cp "$conf" "$conf.leasehold-backup"
    mv -f "$conf.new" "$conf"
    # An older ~/.pip/pip.conf would still be read; keep it out of the way.
    if [ -f "$HOME/.pip/pip.conf" ]; then mv -f "$HOME/.pip/pip.conf" "$HOME/.pip/pip.conf.leasehold-backup"; fi
  fi
  lh_result pip_index "$LH_PIP_URL"
fi"#,
    );
    s.step(
        "conda channels",
        r#"if [ "$LH_CONDA" = keep ]; then lh_skip "conda channels left as they are"; else
  rc="$HOME/.condarc"
  printf '%s' "$LH_CONDARC" > "$rc.new"
  if [ -f "$rc" ] && cmp -s "$rc" "$rc.new"; then rm -f "$rc.new"; lh_skip "conda already uses the $LH_CONDA channels"
  else
    [ ! -f "$rc" ] || [ -f "$rc.leasehold-backup" ] || cp "$rc" "$rc.leasehold-backup"
    mv -f "$rc.new" "$rc"
  fi
  lh_result conda_channels "$LH_CONDA"
fi"#,
    );
    s.step(
        "Hugging Face endpoint",
        r#"if [ "$LH_HF" = keep ]; then lh_skip "HF_ENDPOINT left as it is"; else
  rc="$HOME/.bashrc"; touch "$rc"
  want="export HF_ENDPOINT=$LH_HF_URL"
  if [ -n "$LH_HF_URL" ] && grep -qxF "$want" "$rc"; then lh_skip "HF_ENDPOINT already $LH_HF_URL"
  else
    sed -i '/^# >>> leasehold hf >>>$/,/^# <<< leasehold hf <<<$/d' "$rc"
    if [ -n "$LH_HF_URL" ]; then
      printf '# >>> leasehold hf >>>\n%s\n# <<< leasehold hf <<<\n' "$want" >> "$rc"
    fi
  fi
  lh_result hf_endpoint "${LH_HF_URL:-https://huggingface.co}"
fi
if [ -f /etc/network_turbo ]; then lh_result network_turbo present; fi"#,
    );
    s.step(
        "check",
        r#"if lh_have python3 && python3 -m pip --version >/dev/null 2>&1; then
  python3 -m pip config list 2>/dev/null || true
fi
if base=$(lh_find_conda); then "$base/bin/conda" config --show default_channels 2>/dev/null || true; fi
grep -A1 '^# >>> leasehold hf >>>$' "$HOME/.bashrc" 2>/dev/null | tail -n 1 || true"#,
    );
    s
}

/// Seed 000 §4.2: download Miniconda, install, reload bash, `conda create -n dl python=3.10`.
fn miniconda(get: &dyn Fn(&str) -> String) -> Script {
    let base = match get("mirror").as_str() {
        "tsinghua" => "https://mirrors.tuna.tsinghua.edu.cn/anaconda/miniconda",
        _ => "https://repo.anaconda.com/miniconda",
    };
    let mut s = Script::new("miniconda");
    s.note("Installs Miniconda (unless a conda is already there), runs `conda init bash`, creates the environment.");
    s.var("LH_ENV", &get("env"))
        .var("LH_PYTHON", &get("python"))
        .var("LH_PREFIX", &get("prefix"))
        .var("LH_URL", &get("url"))
        .var("LH_MIRROR_BASE", base);
    s.step(
        "Miniconda",
        r#"if found=$(lh_find_conda); then
  LH_PREFIX=$found
  lh_skip "conda already installed in $LH_PREFIX"
else
  LH_PREFIX=${LH_PREFIX:-$HOME/miniconda3}
  case "$(uname -m)" in
    x86_64|amd64) arch=x86_64 ;;
    aarch64|arm64) arch=aarch64 ;;
    *) lh_fail install.unsupported_arch "no Miniconda for $(uname -m)" ;;
  esac
  url=${LH_URL:-$LH_MIRROR_BASE/Miniconda3-latest-Linux-$arch.sh}
  installer="$HOME/.leasehold/downloads/Miniconda3-latest-Linux-$arch.sh"
  lh_download "$url" "$installer" || lh_fail install.download_failed "could not download $url"
  bash "$installer" -b -u -p "$LH_PREFIX" || { rm -f "$installer"; lh_fail install.miniconda_failed "the Miniconda installer failed (the download was removed; run again)"; }
  [ -x "$LH_PREFIX/bin/conda" ] || lh_fail install.miniconda_failed "no conda in $LH_PREFIX after installing"
fi
lh_result conda_prefix "$LH_PREFIX""#,
    );
    s.step(
        "conda init",
        r#"if grep -q '>>> conda initialize >>>' "$HOME/.bashrc" 2>/dev/null; then lh_skip "conda init already in ~/.bashrc"
else "$LH_PREFIX/bin/conda" init bash || lh_fail install.conda_init "conda init bash failed"; fi"#,
    );
    s.step(
        "environment",
        r#"LH_CONDA_PREFIX=$LH_PREFIX
lh_python_env "$LH_ENV" "$LH_PYTHON""#,
    );
    s.step(
        "check",
        r#""$LH_PREFIX/bin/conda" --version || lh_fail install.conda_broken "conda does not run"
v=$("$LH_PY" --version 2>&1) || lh_fail install.env_broken "the environment's python does not run"
echo "$v"
case "$v" in
  "Python $LH_PYTHON"|"Python $LH_PYTHON".*) lh_result python_version "${v#Python }" ;;
  *) lh_finding install.python_version_differs; echo "the existing environment $LH_ENV has $v, not $LH_PYTHON" ;;
esac
echo "activate it with: conda activate $LH_ENV""#,
    );
    s
}

/// The driver check PyTorch and vLLM start with (seed 000 §3.4, 004 §2.2: nvidia-smi first).
const DRIVER_CHECK: &str = r#"lh_have nvidia-smi || lh_fail driver.missing "nvidia-smi is not installed: this machine has no NVIDIA driver (re-create the instance from an image with the driver)"
drv=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>&1 | head -n 1)
case "$drv" in
  [0-9]*) lh_result driver "$drv" ;;
  *) lh_fail driver.not_working "nvidia-smi cannot talk to the driver: $drv" ;;
esac"#;

/// The checks at the end of the PyTorch recipe: the seed's verification script (version,
/// `cuda.is_available`, device name and memory) plus a real kernel launch. A CPU build or a
/// failed kernel fails the job.
const TORCH_CHECK: &str = r#""$LH_PY" - <<'PY' || exit 1
import sys
try:
    import torch
except Exception as exc:
    print("::leasehold::fail torch.import_failed", exc)
    sys.exit(1)
print("PyTorch version:", torch.__version__)
print("CUDA build:", torch.version.cuda)
print("::leasehold::result torch=" + torch.__version__)
if not torch.version.cuda:
    print("::leasehold::fail torch.cpu_build this is a CPU-only PyTorch build")
    sys.exit(1)
print("CUDA available:", torch.cuda.is_available())
if not torch.cuda.is_available():
    print("::leasehold::fail torch.cuda_unavailable torch.cuda.is_available() is False")
    sys.exit(1)
print("GPU:", torch.cuda.get_device_name(0))
print("memory (GB):", round(torch.cuda.get_device_properties(0).total_memory / 1024**3, 1))
try:
    a = torch.randn(1024, 1024, device="cuda")
    b = a @ a
    torch.cuda.synchronize()
    assert torch.isfinite(b).all().item()
except Exception as exc:
    print("::leasehold::fail torch.kernel_failed", str(exc).splitlines()[0] if str(exc) else exc)
    sys.exit(1)
print("::leasehold::result kernel=ok")
PY"#;

/// Seed 000 §4.2 / 004 §2.3 (pip with `--index-url …/whl/cuXYZ`), the wheel from the catalog.
fn pytorch(options: &RecipeOptions, facts: &InstallFacts) -> Result<Script, InstallError> {
    let r = Recipe::Pytorch;
    let driver = options
        .given("driver")
        .map(str::to_owned)
        .or_else(|| facts.driver.clone())
        .ok_or(InstallError::MissingFact {
            recipe: "pytorch",
            fact: "the driver version",
            hint: "connect to the instance, or give --option driver=570.124.06",
        })?;
    let gpu = options
        .given("gpu")
        .map(str::to_owned)
        .or_else(|| facts.gpu.clone());
    let choice = choose_torch_wheel(&TorchWheelRequest {
        driver: driver.clone(),
        gpu: gpu.clone(),
        compute_cap: None,
    })?;
    let Some(tag) = choice.cuda_tag.clone() else {
        return Err(InstallError::NoWheel(choice.reason));
    };
    let index = options
        .given("index")
        .filter(|i| !i.is_empty())
        .map_or_else(|| choice.index_url.clone(), str::to_owned);
    let mut s = Script::new("pytorch");
    s.note(format!(
        "Wheel chosen from the driver and GPU below: {tag} (PyTorch {}).",
        sanitize(&choice.torch_versions)
    ));
    s.var("LH_ENV", &options.get(r, "env"))
        .var("LH_PYTHON", &options.get(r, "python"))
        .var("LH_PACKAGES", &options.get(r, "packages"))
        .var("LH_INDEX", &index)
        .var("LH_CUDA_TAG", &tag)
        .var("LH_EXPECT_DRIVER", &driver)
        .var("LH_EXPECT_GPU", gpu.as_deref().unwrap_or_default());
    s.step(
        "NVIDIA driver",
        format!(
            r#"{DRIVER_CHECK}
if [ "$drv" != "$LH_EXPECT_DRIVER" ]; then
  lowest=$(printf '%s\n%s\n' "$drv" "$LH_EXPECT_DRIVER" | sort -V | head -n 1)
  [ "$lowest" = "$LH_EXPECT_DRIVER" ] || lh_fail torch.driver_older "the wheel $LH_CUDA_TAG was chosen for driver $LH_EXPECT_DRIVER but this machine has $drv; generate the script for this machine"
  echo "driver $drv is newer than $LH_EXPECT_DRIVER; the $LH_CUDA_TAG wheel still runs"
fi
name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
if [ -n "$LH_EXPECT_GPU" ] && [ -n "$name" ] && [ "$name" != "$LH_EXPECT_GPU" ]; then
  echo "note: the wheel was chosen for $LH_EXPECT_GPU; this machine has $name (the check below still tests a real kernel)"
fi"#
        ),
    );
    s.step("environment", r#"lh_python_env "$LH_ENV" "$LH_PYTHON""#);
    s.step(
        "PyTorch",
        r#"if "$LH_PY" -c 'import sys, torch; t = sys.argv[1]; v = torch.version.cuda; ok = bool(v) and v.replace(".", "") == t[2:] and torch.cuda.is_available() and bool(torch.isfinite(torch.randn(64, 64, device="cuda") @ torch.randn(64, 64, device="cuda")).all().item()); sys.exit(0 if ok else 1)' "$LH_CUDA_TAG" >/dev/null 2>&1; then
  lh_skip "PyTorch for $LH_CUDA_TAG is already installed"
else
  read -r -a pkgs <<< "$LH_PACKAGES"
  lh_pip "${pkgs[@]}" --index-url "$LH_INDEX" || lh_fail torch.pip_failed "pip could not install ${pkgs[*]} from $LH_INDEX"
fi"#,
    );
    s.step("check on the GPU", TORCH_CHECK);
    Ok(s)
}

/// Plain pip packages (seed 004 §2.3 `pip install … -i mirror`), skipping what is installed.
fn pip(get: &dyn Fn(&str) -> String) -> Script {
    let mut s = Script::new("pip");
    s.var("LH_ENV", &get("env"))
        .var("LH_PYTHON", &get("python"))
        .var("LH_PACKAGES", &get("packages"))
        .var("LH_INDEX", &get("index"));
    s.step("environment", r#"lh_python_env "$LH_ENV" "$LH_PYTHON""#);
    s.step(
        "packages",
        r#"read -r -a pkgs <<< "$LH_PACKAGES"
[ "${#pkgs[@]}" -gt 0 ] || lh_fail install.bad_value "no packages given"
missing=0
for p in "${pkgs[@]}"; do
  name=${p%%[<>=!~;[ ]*}
  "$LH_PY" -m pip show -q "$name" >/dev/null 2>&1 || missing=1
done
if [ "$missing" = 0 ]; then lh_skip "already installed: ${pkgs[*]}"
elif [ -n "$LH_INDEX" ]; then lh_pip "${pkgs[@]}" --index-url "$LH_INDEX" || lh_fail install.pip_failed "pip install failed"
else lh_pip "${pkgs[@]}" || lh_fail install.pip_failed "pip install failed"; fi"#,
    );
    s.step(
        "check",
        r#"for p in "${pkgs[@]}"; do
  name=${p%%[<>=!~;[ ]*}
  v=$("$LH_PY" -m pip show "$name" 2>/dev/null | sed -n 's/^Version: //p')
  [ -n "$v" ] || lh_fail install.pip_failed "$name is not installed after pip ran"
  lh_result "$name" "$v"
done"#,
    );
    s
}

/// Shell helper for JSON strings (control characters are refused as option values).
const JSON_ESCAPE: &str =
    r#"lh_json() { local v=${1//\\/\\\\}; v=${v//\"/\\\"}; printf '"%s"' "$v"; }"#;

/// Seed 000 §4.4, 004 §3: install.sh, `ollama serve` with OLLAMA_* settings, `ollama pull`,
/// then one answer through the API, its speed, and whether the model sits wholly in VRAM.
fn ollama(get: &dyn Fn(&str) -> String, facts: &InstallFacts) -> Script {
    let models_dir = match get("models_dir") {
        dir if !dir.is_empty() => dir,
        _ => facts
            .data_disk
            .as_ref()
            .map(|disk| format!("{}/ollama-models", disk.trim_end_matches('/')))
            .unwrap_or_default(),
    };
    let mut s = Script::new("ollama");
    s.note("Installs Ollama, starts `ollama serve` detached (its own session, so it outlives this job), pulls the model and tries it.");
    s.var("LH_MODEL", &get("model"))
        .var("LH_MODELS_DIR", &models_dir)
        .var("LH_HOST", &get("host"))
        .var("LH_NUM_PARALLEL", &get("num_parallel"))
        .var("LH_CONTEXT_LENGTH", &get("context_length"))
        .var("LH_INSTALL_URL", &get("install_url"))
        .var("LH_TURBO", &get("turbo"));
    s.step(
        "Ollama",
        r#"if lh_have ollama; then lh_skip "ollama already installed: $(ollama --version 2>&1 | tail -n 1)"
else
  lh_turbo lh_download "$LH_INSTALL_URL" "$HOME/.leasehold/downloads/ollama-install.sh" || lh_fail install.download_failed "could not download $LH_INSTALL_URL"
  lh_turbo sh "$HOME/.leasehold/downloads/ollama-install.sh" || lh_fail ollama.install_failed "the Ollama install script failed"
  lh_have ollama || lh_fail ollama.install_failed "no ollama command after installing"
fi"#,
    );
    s.step(
        "server",
        format!(
            r#"LH_MODELS_DIR=${{LH_MODELS_DIR:-$HOME/.ollama/models}}
mkdir -p "$LH_MODELS_DIR" || lh_fail ollama.models_dir "cannot create $LH_MODELS_DIR"
export OLLAMA_HOST=$LH_HOST OLLAMA_MODELS=$LH_MODELS_DIR OLLAMA_NUM_PARALLEL=$LH_NUM_PARALLEL OLLAMA_CONTEXT_LENGTH=$LH_CONTEXT_LENGTH
url="http://$LH_HOST"
case "$LH_HOST" in 0.0.0.0:*) url="http://127.0.0.1:${{LH_HOST#0.0.0.0:}}" ;; esac
state="$HOME/.leasehold/ollama-serve.env"
want=$(printf '%s\n' "$OLLAMA_HOST" "$OLLAMA_MODELS" "$OLLAMA_NUM_PARALLEL" "$OLLAMA_CONTEXT_LENGTH")
mkdir -p "$HOME/.leasehold"
if curl -fsS -m 3 "$url/api/version" >/dev/null 2>&1 && [ "$(cat "$state" 2>/dev/null)" = "$want" ]; then
  lh_skip "ollama serve already runs with these settings"
else
  {JSON_ESCAPE}
  sd_esc() {{ local v=${{1//\\/\\\\}}; v=${{v//\"/\\\"}}; v=${{v//%/%%}}; printf '"%s"' "$v"; }}
  if [ -d /run/systemd/system ] && lh_have systemctl && systemctl list-unit-files ollama.service >/dev/null 2>&1 && systemctl is-enabled --quiet ollama 2>/dev/null; then
    dropin=/etc/systemd/system/ollama.service.d/leasehold.conf
    {{ echo '[Service]'
      for kv in "OLLAMA_HOST=$OLLAMA_HOST" "OLLAMA_MODELS=$OLLAMA_MODELS" "OLLAMA_NUM_PARALLEL=$OLLAMA_NUM_PARALLEL" "OLLAMA_CONTEXT_LENGTH=$OLLAMA_CONTEXT_LENGTH"; do
        echo "Environment=$(sd_esc "$kv")"; done; }} > "$HOME/.leasehold/ollama-dropin.conf"
    lh_root mkdir -p "$(dirname "$dropin")" && lh_root cp "$HOME/.leasehold/ollama-dropin.conf" "$dropin"
    lh_root chown -R ollama "$OLLAMA_MODELS" 2>/dev/null || true
    lh_root systemctl daemon-reload && lh_root systemctl restart ollama || lh_fail ollama.serve_failed "systemctl restart ollama failed"
  else
    pid=$(cat "$HOME/.leasehold/ollama-serve.pid" 2>/dev/null)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill "$pid"; sleep 1; fi
    setsid nohup ollama serve >>"$HOME/.leasehold/ollama-serve.log" 2>&1 </dev/null &
    echo $! > "$HOME/.leasehold/ollama-serve.pid"
  fi
  i=0
  until curl -fsS -m 3 "$url/api/version" >/dev/null 2>&1; do
    i=$((i+1)); [ "$i" -lt 60 ] || lh_fail ollama.serve_failed "ollama serve did not answer at $url within 60 s (log: ~/.leasehold/ollama-serve.log)"
    sleep 1
  done
  printf '%s\n' "$want" > "$state"
fi
lh_result ollama_url "$url""#
        ),
    );
    s.step(
        "model",
        r#"if ollama list 2>/dev/null | awk 'NR>1 {print $1}' | grep -qxF -- "$LH_MODEL"; then lh_skip "model $LH_MODEL already pulled"
else ollama pull "$LH_MODEL" || lh_fail ollama.pull_failed "ollama pull $LH_MODEL failed"; fi"#,
    );
    s.step(
        "try the model",
        format!(
            r#"{JSON_ESCAPE}
body=$(printf '{{"model":%s,"prompt":"Say hello in one short sentence.","stream":false}}' "$(lh_json "$LH_MODEL")")
answer=$(curl -fsS -m 600 "$url/api/generate" -d "$body") || lh_fail ollama.generate_failed "the model did not answer"
count=$(printf '%s' "$answer" | grep -o '"eval_count":[0-9]*' | head -n 1 | cut -d: -f2)
nanos=$(printf '%s' "$answer" | grep -o '"eval_duration":[0-9]*' | head -n 1 | cut -d: -f2)
if [ -n "$count" ] && [ -n "$nanos" ] && [ "$nanos" -gt 0 ]; then
  lh_result tokens_per_second "$(awk -v c="$count" -v n="$nanos" 'BEGIN {{ printf "%.1f", c / (n / 1e9) }}')"
fi
ps=$(curl -fsS -m 10 "$url/api/ps") || ps=
size=$(printf '%s' "$ps" | grep -o '"size":[0-9]*' | head -n 1 | cut -d: -f2)
vram=$(printf '%s' "$ps" | grep -o '"size_vram":[0-9]*' | head -n 1 | cut -d: -f2)
if [ -n "$size" ] && [ -n "$vram" ]; then
  lh_result size_bytes "$size"; lh_result size_vram_bytes "$vram"
  if [ "$vram" -lt "$size" ]; then
    lh_finding ollama.cpu_offload
    echo "only $vram of $size bytes of the model are in VRAM: part of it runs on the CPU (smaller OLLAMA_CONTEXT_LENGTH or OLLAMA_NUM_PARALLEL, a smaller quantization, or a GPU with more memory)"
  fi
fi"#
        ),
    );
    s
}

/// Refuse Docker-based recipes on a container before anything runs.
fn refuse_in_container(
    get: &dyn Fn(&str) -> String,
    facts: &InstallFacts,
) -> Result<(), InstallError> {
    match get("container").as_str() {
        "yes" => Err(InstallError::DockerInContainer {
            kind: "as given".to_owned(),
        }),
        "no" => Ok(()),
        _ => match &facts.container {
            Some(kind) => Err(InstallError::DockerInContainer { kind: kind.clone() }),
            None => Ok(()),
        },
    }
}

const CONTAINER_CHECK: &str = r#"if lh_in_container; then
  lh_fail docker.impossible_in_container "this machine is itself a container: Docker cannot run here. Use the instance's own Python/conda environment, or rent a virtual machine for Docker"
fi"#;

/// Seed 004 §5.2: Docker CE, then the NVIDIA Container Toolkit from nvidia.github.io, `nvidia-ctk
/// runtime configure --runtime=docker`, restart Docker, `docker run --gpus all … nvidia-smi`.
fn docker(get: &dyn Fn(&str) -> String, facts: &InstallFacts) -> Result<Script, InstallError> {
    refuse_in_container(get, facts)?;
    let mut s = Script::new("docker");
    s.note("Virtual machines only: a container cannot run Docker.");
    s.var("LH_MIRROR", &get("mirror"))
        .var("LH_TEST_IMAGE", &get("test_image"));
    s.step("not a container", CONTAINER_CHECK);
    s.step(
        "Docker",
        r#"if lh_have docker; then lh_skip "docker already installed: $(docker --version)"
else
  lh_download https://get.docker.com "$HOME/.leasehold/downloads/get-docker.sh" || lh_fail install.download_failed "could not download get.docker.com"
  if [ "$LH_MIRROR" = aliyun ]; then lh_root sh "$HOME/.leasehold/downloads/get-docker.sh" --mirror Aliyun
  else lh_root sh "$HOME/.leasehold/downloads/get-docker.sh"; fi || lh_fail docker.install_failed "the Docker install script failed"
fi"#,
    );
    s.step(
        "NVIDIA Container Toolkit",
        r#"if lh_have nvidia-ctk; then lh_skip "NVIDIA Container Toolkit already installed"
elif lh_have apt-get; then
  lh_turbo curl -fsSL https://nvidia.github.io/libnvidia-container/gpgkey | lh_root gpg --dearmor --yes -o /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg || lh_fail docker.toolkit_failed "could not fetch NVIDIA's signing key"
  lh_turbo curl -s -L https://nvidia.github.io/libnvidia-container/stable/deb/nvidia-container-toolkit.list \
    | sed 's#deb https://#deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg] https://#g' \
    | lh_root tee /etc/apt/sources.list.d/nvidia-container-toolkit.list >/dev/null
  lh_root apt-get update && lh_root apt-get install -y nvidia-container-toolkit || lh_fail docker.toolkit_failed "apt-get install nvidia-container-toolkit failed"
elif lh_have yum || lh_have dnf; then
  lh_turbo curl -s -L https://nvidia.github.io/libnvidia-container/stable/rpm/nvidia-container-toolkit.repo | lh_root tee /etc/yum.repos.d/nvidia-container-toolkit.repo >/dev/null
  if lh_have dnf; then lh_root dnf install -y nvidia-container-toolkit; else lh_root yum install -y nvidia-container-toolkit; fi || lh_fail docker.toolkit_failed "installing nvidia-container-toolkit failed"
else
  lh_fail docker.toolkit_failed "no apt-get, dnf or yum to install the NVIDIA Container Toolkit with"
fi"#,
    );
    s.step(
        "runtime",
        r#"if lh_root docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q nvidia; then lh_skip "Docker already has the nvidia runtime"
else
  lh_root nvidia-ctk runtime configure --runtime=docker || lh_fail docker.toolkit_failed "nvidia-ctk runtime configure failed"
  if lh_have systemctl; then lh_root systemctl restart docker; else lh_root service docker restart; fi || lh_fail docker.restart_failed "could not restart Docker"
fi"#,
    );
    s.step(
        "GPU container",
        r#"lh_root docker run --rm --gpus all "$LH_TEST_IMAGE" nvidia-smi || lh_fail docker.gpu_container_failed "a container could not see the GPU"
lh_result docker_gpu ok"#,
    );
    Ok(s)
}

/// vLLM in its own environment (seed 004 §5.3 recommends Docker + vLLM; we keep it runnable on
/// container instances too), its OpenAI-compatible server, one completion and its speed.
fn vllm(options: &RecipeOptions, facts: &InstallFacts) -> Script {
    let r = Recipe::Vllm;
    let hf = options
        .given("hf")
        .map(str::to_owned)
        .or_else(|| facts.fastest_hf.clone())
        .unwrap_or_else(|| "keep".to_owned());
    let mut s = Script::new("vllm");
    s.note("vLLM gets its own environment so the PyTorch wheel of your main environment stays as it is.");
    s.var("LH_ENV", &options.get(r, "env"))
        .var("LH_PYTHON", &options.get(r, "python"))
        .var("LH_MODEL", &options.get(r, "model"))
        .var("LH_PORT", &options.get(r, "port"))
        .var("LH_TP", &options.get(r, "tensor_parallel"))
        .var("LH_GPU_UTIL", &options.get(r, "gpu_memory_utilization"))
        .var("LH_HF_URL", hf_endpoint(&hf))
        .var("LH_TURBO", &options.get(r, "turbo"));
    s.step("NVIDIA driver", DRIVER_CHECK);
    s.step("environment", r#"lh_python_env "$LH_ENV" "$LH_PYTHON""#);
    s.step(
        "vLLM",
        r#"if "$LH_PY" -c 'import vllm' 2>/dev/null; then lh_skip "vLLM already installed: $("$LH_PY" -c 'import vllm; print(vllm.__version__)')"
else lh_pip vllm || lh_fail vllm.install_failed "pip install vllm failed"; fi"#,
    );
    s.step(
        "model download",
        r#"[ -z "$LH_HF_URL" ] || export HF_ENDPOINT=$LH_HF_URL
case "$LH_MODEL" in
  /*|./*|~*) lh_skip "local model $LH_MODEL" ;;
  *) lh_turbo "$LH_PY" -c 'import sys; from huggingface_hub import snapshot_download; print(snapshot_download(sys.argv[1]))' "$LH_MODEL" || lh_fail vllm.download_failed "could not download $LH_MODEL" ;;
esac"#,
    );
    s.step(
        "server",
        r#"url="http://127.0.0.1:$LH_PORT"
log="$HOME/.leasehold/vllm-$LH_PORT.log"
mkdir -p "$HOME/.leasehold"
if curl -fsS -m 3 "$url/v1/models" 2>/dev/null | grep -qF -- "$LH_MODEL"; then lh_skip "vLLM already serves $LH_MODEL on port $LH_PORT"
else
  setsid nohup "$LH_PY" -m vllm.entrypoints.openai.api_server --model "$LH_MODEL" --host 127.0.0.1 --port "$LH_PORT" \
    --tensor-parallel-size "$LH_TP" --gpu-memory-utilization "$LH_GPU_UTIL" >>"$log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" > "$HOME/.leasehold/vllm-$LH_PORT.pid"
  i=0
  until curl -fsS -m 3 "$url/v1/models" >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || { tail -n 30 "$log"; lh_fail vllm.serve_failed "the vLLM server exited (log: $log)"; }
    i=$((i+1)); [ "$i" -lt 900 ] || lh_fail vllm.serve_failed "the vLLM server did not answer within 15 minutes"
    sleep 1
  done
fi
lh_result openai_url "$url/v1""#,
    );
    s.step(
        "one completion",
        format!(
            r#"{JSON_ESCAPE}
body=$(printf '{{"model":%s,"prompt":"Hello, my name is","max_tokens":64}}' "$(lh_json "$LH_MODEL")")
t0=$(date +%s.%N)
answer=$(curl -fsS -m 600 "$url/v1/completions" -H 'Content-Type: application/json' -d "$body") || lh_fail vllm.completion_failed "the completion request failed"
t1=$(date +%s.%N)
tokens=$(printf '%s' "$answer" | grep -o '"completion_tokens":[0-9]*' | head -n 1 | cut -d: -f2)
[ -n "$tokens" ] || lh_fail vllm.completion_failed "the answer had no token count: $answer"
lh_result tokens_per_second "$(awk -v c="$tokens" -v a="$t0" -v b="$t1" 'BEGIN {{ printf "%.1f", c / (b - a) }}')""#
        ),
    );
    s
}

/// Seed 004 §5.3: Hugging Face TGI from its official image.
fn tgi(get: &dyn Fn(&str) -> String, facts: &InstallFacts) -> Result<Script, InstallError> {
    refuse_in_container(get, facts)?;
    let data_dir = match get("data_dir") {
        dir if !dir.is_empty() => dir,
        _ => facts
            .data_disk
            .as_ref()
            .map(|disk| format!("{}/tgi-data", disk.trim_end_matches('/')))
            .unwrap_or_default(),
    };
    let mut s = Script::new("tgi");
    s.note("Text Generation Inference runs in Docker: virtual machines only (install the docker recipe first).");
    s.var("LH_MODEL", &get("model"))
        .var("LH_PORT", &get("port"))
        .var("LH_IMAGE", &get("image"))
        .var("LH_DATA", &data_dir);
    s.step("not a container", CONTAINER_CHECK);
    s.step(
        "Docker with GPUs",
        r#"lh_have docker || lh_fail docker.missing "Docker is not installed: run the docker recipe first"
lh_root docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q nvidia || lh_fail docker.no_nvidia_runtime "Docker has no nvidia runtime: run the docker recipe first""#,
    );
    s.step(
        "server",
        r#"LH_DATA=${LH_DATA:-$HOME/tgi-data}
mkdir -p "$LH_DATA"
name="leasehold-tgi-$LH_PORT"
url="http://127.0.0.1:$LH_PORT"
if [ "$(lh_root docker inspect -f '{{.State.Running}}' "$name" 2>/dev/null)" = true ]; then lh_skip "TGI already runs as $name"
else
  lh_root docker rm -f "$name" >/dev/null 2>&1 || true
  lh_root docker run -d --name "$name" --gpus all --shm-size 1g -p "127.0.0.1:$LH_PORT:80" -v "$LH_DATA:/data" "$LH_IMAGE" --model-id "$LH_MODEL" \
    || lh_fail tgi.start_failed "docker run of $LH_IMAGE failed"
fi
i=0
until curl -fsS -m 3 "$url/health" >/dev/null 2>&1; do
  [ "$(lh_root docker inspect -f '{{.State.Running}}' "$name" 2>/dev/null)" = true ] || { lh_root docker logs --tail 30 "$name"; lh_fail tgi.start_failed "the TGI container stopped"; }
  i=$((i+1)); [ "$i" -lt 1800 ] || lh_fail tgi.start_failed "TGI did not become healthy within 30 minutes"
  sleep 1
done
lh_result tgi_url "$url""#,
    );
    s.step(
        "one generation",
        r#"t0=$(date +%s.%N)
answer=$(curl -fsS -m 600 "$url/generate" -H 'Content-Type: application/json' -d '{"inputs":"Hello, my name is","parameters":{"max_new_tokens":64,"details":true}}') || lh_fail tgi.generate_failed "the generate request failed"
t1=$(date +%s.%N)
tokens=$(printf '%s' "$answer" | grep -o '"generated_tokens":[0-9]*' | head -n 1 | cut -d: -f2)
[ -z "$tokens" ] || lh_result tokens_per_second "$(awk -v c="$tokens" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", c / (b - a) }')""#,
    );
    Ok(s)
}

/// Seed 004 §6.2: one process per GPU, each seeing only its own card.
fn per_gpu(get: &dyn Fn(&str) -> String) -> Script {
    let gpus = get("gpus");
    let mut s = Script::new("per-gpu");
    s.var("LH_COMMAND", &get("command")).var("LH_GPUS", &gpus);
    s.step(
        "GPUs",
        r#"if [ "$LH_GPUS" = all ]; then
  lh_have nvidia-smi || lh_fail driver.missing "nvidia-smi is not installed"
  gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | tr -d ' ' | paste -sd, -)
else gpus=$LH_GPUS; fi
[ -n "$gpus" ] || lh_fail gpu.none "no GPU found"
lh_result gpus "$gpus""#,
    );
    s.step(
        "one process per GPU",
        r#"pids=
IFS=, read -r -a list <<< "$gpus"
for i in "${list[@]}"; do
  cmd=${LH_COMMAND//\{gpu\}/$i}
  ( CUDA_VISIBLE_DEVICES=$i bash -c "$cmd" 2>&1 | sed -u "s/^/[gpu $i] /"; exit "${PIPESTATUS[0]}" ) &
  pids="$pids $!"
done
failed=0
for p in $pids; do wait "$p" || failed=$((failed+1)); done
[ "$failed" = 0 ] || lh_fail per_gpu.failed "$failed of ${#list[@]} GPU processes failed""#,
    );
    s
}

/// Text from facts that goes into a header comment: one line, printable.
fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}
