//! Recipes as text (`bash -n`, the wheel line, refusals) and run for real in a sandbox folder:
//! HOME is a temp dir, and the few tools a recipe would change the machine with (ollama, curl,
//! python3 for venvs) are small stand-in programs on PATH that record how they were called.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;
use crate::Coded;

/// Values that break naive quoting: spaces, both quotes, command substitution, backticks,
/// globs, a leading dash, unicode.
const HOSTILE: &str = "my dir/it's \"q\" $(touch PWNED) `touch PWNED2` * -x 模型✓";

fn options(recipe: Recipe, pairs: &[(&str, &str)]) -> RecipeOptions {
    RecipeOptions::from_map(
        recipe,
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    )
    .expect("valid options")
}

fn facts_with_driver(driver: &str, gpu: &str) -> InstallFacts {
    InstallFacts {
        driver: Some(driver.to_owned()),
        gpu: Some(gpu.to_owned()),
        container_checked: true,
        ..InstallFacts::default()
    }
}

fn bash_n(script: &str) {
    let out = Command::new("bash")
        .arg("-n")
        .arg("-c")
        .arg(script)
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "bash -n rejected the script:\n{}\n{script}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_recipe_with_defaults_is_valid_bash() {
    let facts = facts_with_driver("570.124.06", "NVIDIA GeForce RTX 4090");
    for recipe in Recipe::ALL {
        let opts = match recipe {
            Recipe::Pip => options(recipe, &[("packages", "six")]),
            Recipe::PerGpu => options(recipe, &[("command", "python train.py --gpu {gpu}")]),
            _ => options(recipe, &[]),
        };
        let text = script(recipe, &opts, &facts)
            .unwrap_or_else(|err| panic!("{} with defaults: {err}", recipe.as_str()));
        bash_n(&text);
        assert!(
            text.contains("::leasehold::step") || text.contains("lh_step 1"),
            "{} prints step markers",
            recipe.as_str()
        );
    }
}

#[test]
fn every_free_text_option_is_quoted() {
    let facts = facts_with_driver("570.124.06", "NVIDIA GeForce RTX 4090");
    for recipe in Recipe::ALL {
        for spec in recipe.options() {
            if !matches!(spec.kind, ValueKind::Text | ValueKind::NonEmpty) {
                continue;
            }
            let mut pairs = vec![(spec.name, HOSTILE)];
            if recipe == Recipe::Pip && spec.name != "packages" {
                pairs.push(("packages", "six"));
            }
            if recipe == Recipe::PerGpu && spec.name != "command" {
                pairs.push(("command", "true"));
            }
            let opts = options(recipe, &pairs);
            let text = match script(recipe, &opts, &facts) {
                Ok(text) => text,
                // Facts given as options are still checked for meaning (a driver version).
                Err(err) if err.is_bad_input() && spec.name == "driver" => continue,
                Err(err) => panic!("{} {}: {err}", recipe.as_str(), spec.name),
            };
            bash_n(&text);
            assert!(
                text.contains(&crate::shell::quote(HOSTILE).into_owned()),
                "{} {}: the value must appear exactly once as a quoted word",
                recipe.as_str(),
                spec.name
            );
            // Run only the assignments: the shell must read the value back unchanged.
            let assignments: String = text
                .lines()
                .filter(|l| l.starts_with("LH_") && l.contains('='))
                .map(|l| format!("{l}\n"))
                .collect();
            let sandbox = tempfile::tempdir().expect("tempdir");
            let out = Command::new("bash")
                .current_dir(sandbox.path())
                .arg("-c")
                .arg(format!(
                    "{assignments}declare -p | grep -c PWNED >/dev/null; set | grep '^LH_' "
                ))
                .output()
                .expect("bash");
            let vars = String::from_utf8_lossy(&out.stdout);
            assert!(
                !sandbox.path().join("PWNED").exists() && !sandbox.path().join("PWNED2").exists(),
                "{} {}: a value was executed",
                recipe.as_str(),
                spec.name
            );
            assert!(vars.contains("模型✓"), "unicode survives: {vars}");
        }
    }
}

#[test]
fn unknown_options_and_malformed_values_are_refused() {
    let err = RecipeOptions::parse(Recipe::Ollama, &["modle=x".into()]).expect_err("typo");
    assert_eq!(err.code(), "install.unknown_option");
    assert!(err.is_bad_input());
    let err = RecipeOptions::parse(Recipe::Ollama, &["model".into()]).expect_err("no =");
    assert_eq!(err.code(), "install.bad_value");
    let err = RecipeOptions::parse(Recipe::Ollama, &["num_parallel=0".into()]).expect_err("range");
    assert_eq!(err.code(), "install.bad_value");
    let err = RecipeOptions::parse(Recipe::Mirrors, &["pip=douban".into()]).expect_err("choice");
    assert_eq!(err.code(), "install.bad_value");
    let err = RecipeOptions::parse(Recipe::Miniconda, &["python=three".into()]).expect_err("py");
    assert_eq!(err.code(), "install.bad_value");
    let err = RecipeOptions::parse(Recipe::Miniconda, &["env=a b".into()]).expect_err("env");
    assert_eq!(err.code(), "install.bad_value");
    let err = RecipeOptions::parse(Recipe::Ollama, &["model=a\nb".into()]).expect_err("newline");
    assert_eq!(err.code(), "install.bad_value");
    let err = RecipeOptions::parse(Recipe::Ollama, &["model=a".into(), "model=b".into()])
        .expect_err("twice");
    assert_eq!(err.code(), "install.bad_value");
    assert_eq!(
        Recipe::parse("condaa").expect_err("unknown").code(),
        "install.unknown_recipe"
    );
    let err = RecipeOptions::parse(Recipe::PerGpu, &["gpus=0;reboot".into()]).expect_err("gpus");
    assert_eq!(err.code(), "install.bad_value");
}

#[test]
fn the_wheel_line_follows_driver_and_gpu() {
    let cases = [
        ("570.124.06", "NVIDIA GeForce RTX 5090", "cu128"),
        ("535.104.05", "NVIDIA GeForce RTX 4090", "cu126"),
        ("525.60.13", "NVIDIA A100-SXM4-80GB", "cu126"),
        ("580.65.06", "NVIDIA H100 80GB HBM3", "cu130"),
    ];
    for (driver, gpu, tag) in cases {
        let choice = crate::catalog::choose_torch_wheel(&crate::catalog::TorchWheelRequest {
            driver: driver.into(),
            gpu: Some(gpu.into()),
            compute_cap: None,
        })
        .expect("choice");
        let text = script(
            Recipe::Pytorch,
            &options(Recipe::Pytorch, &[]),
            &facts_with_driver(driver, gpu),
        )
        .expect("script");
        let expected = choice.cuda_tag.clone().expect("a wheel fits");
        assert_eq!(expected, tag, "{driver} + {gpu}: {}", choice.reason);
        assert!(
            text.contains(&format!(
                "LH_INDEX=https://download.pytorch.org/whl/{tag}\n"
            )),
            "{driver} + {gpu} must install from the {tag} index"
        );
        assert!(text.contains(&format!("LH_CUDA_TAG={tag}\n")));
    }
    // Blackwell on a driver that predates it: no wheel, nothing to run.
    let err = script(
        Recipe::Pytorch,
        &options(Recipe::Pytorch, &[]),
        &facts_with_driver("535.104.05", "NVIDIA GeForce RTX 5090"),
    )
    .expect_err("no wheel for a 5090 on 535");
    assert_eq!(err.code(), "install.no_wheel");
    // Facts given as options win over (missing) facts.
    let text = script(
        Recipe::Pytorch,
        &options(
            Recipe::Pytorch,
            &[("driver", "570.124.06"), ("gpu", "RTX 5090")],
        ),
        &InstallFacts::default(),
    )
    .expect("from options");
    assert!(text.contains("/whl/cu128\n"));
    let err = script(
        Recipe::Pytorch,
        &options(Recipe::Pytorch, &[]),
        &InstallFacts::default(),
    )
    .expect_err("no driver");
    assert_eq!(err.code(), "install.missing_fact");
}

#[test]
fn docker_is_refused_in_a_container_before_anything_runs() {
    let facts = InstallFacts {
        container: Some("docker".into()),
        container_checked: true,
        ..InstallFacts::default()
    };
    for recipe in [Recipe::Docker, Recipe::Tgi] {
        let err = script(recipe, &options(recipe, &[]), &facts).expect_err("refused");
        assert_eq!(err.code(), "docker.impossible_in_container");
        assert!(!err.is_bad_input(), "not the user's typo: exit 1");
        let err = script(
            recipe,
            &options(recipe, &[("container", "yes")]),
            &InstallFacts::default(),
        )
        .expect_err("refused when told");
        assert_eq!(err.code(), "docker.impossible_in_container");
    }
}

/// A sandbox: HOME and PATH of our own, stand-in tools written as small sh scripts.
struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("home")).expect("home");
        std::fs::create_dir_all(dir.path().join("bin")).expect("bin");
        Self { dir }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn calls(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("calls")).unwrap_or_default()
    }

    fn tool(&self, name: &str, body: &str) {
        let path = self.dir.path().join("bin").join(name);
        std::fs::write(
            &path,
            format!(
                "#!/bin/sh\nCALLS={}\n{body}\n",
                self.dir.path().join("calls").display()
            ),
        )
        .expect("write tool");
        let mut perms = std::fs::metadata(&path).expect("meta").permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&path, perms).expect("chmod");
    }

    /// Run the script with only our bin and the system's basic tools on PATH.
    fn run(&self, script: &str, env: &[(&str, &str)]) -> (i32, String) {
        let path = format!("{}:/usr/bin:/bin", self.dir.path().join("bin").display());
        let mut command = Command::new("bash");
        command
            .arg("-c")
            .arg(script)
            .current_dir(self.dir.path())
            .env_clear()
            .env("HOME", self.home())
            .env("PATH", path);
        for (k, v) in env {
            command.env(k, v);
        }
        let out = command.output().expect("bash runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code().unwrap_or(-1), text)
    }

    fn no_injection(&self) {
        for root in [self.dir.path().to_path_buf(), self.home()] {
            for name in ["PWNED", "PWNED2"] {
                assert!(!root.join(name).exists(), "an option value was executed");
            }
        }
    }
}

fn markers(output: &str, kind: &str) -> Vec<String> {
    output
        .lines()
        .filter_map(|l| l.strip_prefix(&format!("::leasehold::{kind} ")))
        .map(str::to_owned)
        .collect()
}

#[test]
fn mirrors_write_pip_conda_and_hf_settings_and_a_second_run_skips() {
    let sandbox = Sandbox::new();
    let text = script(
        Recipe::Mirrors,
        &options(
            Recipe::Mirrors,
            &[("pip", "tsinghua"), ("conda", "ustc"), ("hf", "hf-mirror")],
        ),
        &InstallFacts::default(),
    )
    .expect("script");
    let (code, out) = sandbox.run(&text, &[]);
    assert_eq!(code, 0, "{out}");
    let home = sandbox.home();
    let pip = std::fs::read_to_string(home.join(".config/pip/pip.conf")).expect("pip.conf");
    assert!(
        pip.contains("index-url = https://pypi.tuna.tsinghua.edu.cn/simple\n"),
        "{pip}"
    );
    let condarc = std::fs::read_to_string(home.join(".condarc")).expect(".condarc");
    assert!(condarc.contains("  - https://mirrors.ustc.edu.cn/anaconda/pkgs/main\n"));
    assert!(condarc.contains("show_channel_urls: true"));
    let bashrc = std::fs::read_to_string(home.join(".bashrc")).expect(".bashrc");
    assert!(bashrc.contains("export HF_ENDPOINT=https://hf-mirror.com\n"));
    assert!(
        markers(&out, "skip").is_empty(),
        "first run changes things: {out}"
    );

    let (code, out) = sandbox.run(&text, &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        markers(&out, "skip").len(),
        3,
        "second run skips all three: {out}"
    );

    // Back to official: the HF block goes away, pip points at pypi.org.
    let text = script(
        Recipe::Mirrors,
        &options(
            Recipe::Mirrors,
            &[
                ("pip", "official"),
                ("conda", "official"),
                ("hf", "official"),
            ],
        ),
        &InstallFacts::default(),
    )
    .expect("script");
    let (code, out) = sandbox.run(&text, &[]);
    assert_eq!(code, 0, "{out}");
    let bashrc = std::fs::read_to_string(home.join(".bashrc")).expect(".bashrc");
    assert!(!bashrc.contains("HF_ENDPOINT"), "{bashrc}");
    assert!(
        home.join(".config/pip/pip.conf.leasehold-backup").exists(),
        "one backup kept"
    );
}

#[test]
fn the_docker_script_refuses_by_itself_on_a_container_like_host() {
    let sandbox = Sandbox::new();
    sandbox.tool("docker", "echo \"docker $*\" >> \"$CALLS\"");
    let text = script(
        Recipe::Docker,
        &options(Recipe::Docker, &[("container", "no")]),
        &InstallFacts::default(),
    )
    .expect("told it is a VM");
    let (code, out) = sandbox.run(&text, &[("container", "docker")]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        markers(&out, "fail")
            .first()
            .map(|f| f.split(' ').next().unwrap_or_default().to_owned()),
        Some("docker.impossible_in_container".to_owned()),
        "{out}"
    );
    assert_eq!(sandbox.calls(), "", "nothing ran before the refusal");
}

#[test]
fn ollama_gets_every_setting_verbatim_and_reports_cpu_offload() {
    let sandbox = Sandbox::new();
    // Stand-ins: `ollama` records its arguments and environment; `curl` answers like the
    // Ollama API (version, generate, ps) with half of the model in VRAM.
    sandbox.tool(
        "ollama",
        r#"case "$1" in
  serve) printf 'serve host=%s models=%s parallel=%s ctx=%s\n' "$OLLAMA_HOST" "$OLLAMA_MODELS" "$OLLAMA_NUM_PARALLEL" "$OLLAMA_CONTEXT_LENGTH" >> "$CALLS" ;;
  list) echo "NAME ID SIZE MODIFIED" ;;
  pull) printf 'pull [%s]\n' "$2" >> "$CALLS"; echo "pulling 2bada8a74506: 100% ▕████████▏ 4.7 GB/4.7 GB" ;;
  --version) echo "ollama version is 0.5.7" ;;
esac"#,
    );
    sandbox.tool(
        "curl",
        r#"for a in "$@"; do last=$a; done
case "$*" in
  *api/version*) echo '{"version":"0.5.7"}' ;;
  *api/generate*) printf 'generate %s\n' "$last" >> "$CALLS"; echo '{"response":"hi","eval_count":50,"eval_duration":2000000000}' ;;
  *api/ps*) echo '{"models":[{"name":"m","size":8000,"size_vram":4000}]}' ;;
  *) exit 7 ;;
esac"#,
    );
    let text = script(
        Recipe::Ollama,
        &options(
            Recipe::Ollama,
            &[
                ("model", HOSTILE),
                (
                    "models_dir",
                    &format!("{}/{HOSTILE}", sandbox.home().display()),
                ),
                ("num_parallel", "2"),
                ("context_length", "8192"),
            ],
        ),
        &InstallFacts::default(),
    )
    .expect("script");
    let (code, out) = sandbox.run(&text, &[]);
    assert_eq!(code, 0, "{out}");
    sandbox.no_injection();
    let calls = sandbox.calls();
    assert!(calls.contains(&format!("pull [{HOSTILE}]\n")), "{calls}");
    assert!(
        calls.contains(&format!(
            "serve host=127.0.0.1:11434 models={}/{HOSTILE} parallel=2 ctx=8192\n",
            sandbox.home().display()
        )),
        "{calls}"
    );
    let body = calls
        .lines()
        .find_map(|l| l.strip_prefix("generate "))
        .expect("generate called");
    let json: serde_json::Value = serde_json::from_str(body).expect("valid JSON body");
    assert_eq!(
        json["model"], HOSTILE,
        "the model name survives JSON and shell"
    );
    assert!(Path::new(&format!("{}/{HOSTILE}", sandbox.home().display())).is_dir());
    assert_eq!(markers(&out, "finding"), vec!["ollama.cpu_offload"]);
    assert!(
        markers(&out, "result").contains(&"tokens_per_second=25.0".to_owned()),
        "{out}"
    );
}

#[test]
fn a_cpu_build_or_a_failed_kernel_fails_the_pytorch_job() {
    // A stand-in `torch` package shaped like a CPU-only build, then like a CUDA build whose
    // kernels do not fit the GPU (the sm_120 message of a pre-2.7 wheel on an RTX 5090).
    for (cuda, kernel_error, code) in [
        ("None", "", "torch.cpu_build"),
        (
            "'12.8'",
            "raise RuntimeError('CUDA error: no kernel image is available for execution on the device')",
            "torch.kernel_failed",
        ),
    ] {
        let sandbox = Sandbox::new();
        sandbox.tool(
            "nvidia-smi",
            "echo 570.124.06",
        );
        let venv = sandbox.home().join(".venvs/dl");
        let site = venv.join("site");
        std::fs::create_dir_all(site.join("torch")).expect("torch dir");
        std::fs::create_dir_all(venv.join("bin")).expect("bin");
        std::fs::write(
            site.join("torch/__init__.py"),
            format!(
                "__version__ = '2.8.0'\nclass version:\n    cuda = {cuda}\n\
                 class cuda:\n    @staticmethod\n    def is_available(): return True\n\
                 \x20   @staticmethod\n    def get_device_name(i): return 'NVIDIA GeForce RTX 5090'\n\
                 \x20   @staticmethod\n    def get_device_properties(i):\n        class P: total_memory = 32 * 1024**3\n        return P\n\
                 \x20   @staticmethod\n    def synchronize(): pass\n\
                 def randn(*a, **k):\n    {}\n    return 1\n",
                if kernel_error.is_empty() { "pass" } else { kernel_error }
            ),
        )
        .expect("torch stand-in");
        let python = venv.join("bin/python");
        std::fs::write(
            &python,
            format!(
                "#!/bin/sh\nif [ \"$1 $2 $3\" = \"-m pip install\" ]; then echo \"pip $*\" >> {calls}; exit 0; fi\nPYTHONPATH={site} exec /usr/bin/python3 \"$@\"\n",
                calls = sandbox.dir.path().join("calls").display(),
                site = site.display()
            ),
        )
        .expect("python");
        let mut perms = std::fs::metadata(&python).expect("meta").permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&python, perms).expect("chmod");
        let text = script(
            Recipe::Pytorch,
            &options(Recipe::Pytorch, &[]),
            &facts_with_driver("570.124.06", "NVIDIA GeForce RTX 5090"),
        )
        .expect("script");
        let (exit, out) = sandbox.run(&text, &[]);
        assert_eq!(exit, 1, "{out}");
        let fail = markers(&out, "fail");
        assert!(
            fail.first().is_some_and(|f| f.starts_with(code)),
            "expected {code}: {out}"
        );
        assert!(
            sandbox.calls().contains("--index-url https://download.pytorch.org/whl/cu128"),
            "the chosen wheel was installed first: {}",
            sandbox.calls()
        );
    }
}

#[test]
fn pytorch_refuses_without_a_driver_when_it_runs() {
    let sandbox = Sandbox::new();
    let text = script(
        Recipe::Pytorch,
        &options(
            Recipe::Pytorch,
            &[("driver", "570.124.06"), ("gpu", "RTX 4090")],
        ),
        &InstallFacts::default(),
    )
    .expect("script");
    let (exit, out) = sandbox.run(&text, &[]);
    assert_eq!(exit, 1, "{out}");
    assert!(
        markers(&out, "fail")
            .first()
            .is_some_and(|f| f.starts_with("driver.missing")),
        "{out}"
    );
    assert!(
        !sandbox.home().join(".venvs").exists(),
        "nothing was created"
    );
}

#[test]
fn per_gpu_runs_one_process_per_gpu_with_its_own_devices() {
    let sandbox = Sandbox::new();
    let text = script(
        Recipe::PerGpu,
        &options(
            Recipe::PerGpu,
            &[
                ("command", "echo \"index {gpu} sees $CUDA_VISIBLE_DEVICES\""),
                ("gpus", "0,2"),
            ],
        ),
        &InstallFacts::default(),
    )
    .expect("script");
    let (exit, out) = sandbox.run(&text, &[]);
    assert_eq!(exit, 0, "{out}");
    assert!(out.contains("[gpu 0] index 0 sees 0\n"), "{out}");
    assert!(out.contains("[gpu 2] index 2 sees 2\n"), "{out}");
}

#[test]
fn export_setup_replays_scripts_in_order_as_one_valid_script() {
    let at = chrono::DateTime::parse_from_rfc3339("2026-12-01T10:00:00Z")
        .expect("time")
        .with_timezone(&chrono::Utc);
    let runs = vec![
        ("mirrors".to_owned(), at, "echo one 'x'\n".to_owned()),
        ("pip".to_owned(), at, "echo \"two $HOME\"\n".to_owned()),
    ];
    let text = export_setup("gpu-box", &runs);
    bash_n(&text);
    let sandbox = Sandbox::new();
    let (exit, out) = sandbox.run(&text, &[]);
    assert_eq!(exit, 0, "{out}");
    assert_eq!(out, format!("one x\ntwo {}\n", sandbox.home().display()));
}

/// A tiny HTTP server for stand-in downloads, with `Range: bytes=N-` support (what `curl -C -`
/// sends to resume). Records each request's path and range start.
struct Downloads {
    port: u16,
    seen: std::sync::Arc<std::sync::Mutex<Vec<(String, u64)>>>,
}

impl Downloads {
    fn serve(files: Vec<(&'static str, Vec<u8>)>) -> Self {
        use std::io::{BufRead, BufReader, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut request = String::new();
                let _ = reader.read_line(&mut request);
                let path = request.split_whitespace().nth(1).unwrap_or("/").to_owned();
                let mut from = 0u64;
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
                        break;
                    }
                    if let Some(range) = header.to_ascii_lowercase().strip_prefix("range: bytes=") {
                        from = range.trim().trim_end_matches('-').parse().unwrap_or(0);
                    }
                }
                log.lock().expect("log").push((path.clone(), from));
                let mut out = stream;
                match files.iter().find(|(name, _)| *name == path) {
                    Some((_, body)) => {
                        let start = usize::try_from(from).unwrap_or(0).min(body.len());
                        let head = if from > 0 {
                            format!(
                                "HTTP/1.1 206 Partial Content\r\nContent-Length: {}\r\nContent-Range: bytes {start}-{}/{}\r\nConnection: close\r\n\r\n",
                                body.len() - start,
                                body.len() - 1,
                                body.len()
                            )
                        } else {
                            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len())
                        };
                        let _ = out.write_all(head.as_bytes());
                        let _ = out.write_all(&body[start..]);
                    }
                    None => {
                        let _ = out.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                    }
                }
            }
        });
        Self { port, seen }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn seen(&self) -> Vec<(String, u64)> {
        self.seen.lock().expect("log").clone()
    }
}

/// A stand-in Miniconda installer: `-b -u -p PREFIX` leaves a `conda` that can `init bash`,
/// `create -y -n NAME python=X` and print its version. Padded so a resume is a real resume.
fn stand_in_miniconda() -> Vec<u8> {
    let mut text = String::from(
        r#"#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in -p) prefix=$2; shift ;; esac; shift; done
mkdir -p "$prefix/bin"
cat > "$prefix/bin/conda" <<'CONDA'
#!/bin/sh
prefix=$(cd "$(dirname "$0")/.." && pwd)
case "$1" in
  init) printf '# >>> conda initialize >>>\n# <<< conda initialize <<<\n' >> "$HOME/.bashrc" ;;
  create) shift
    while [ $# -gt 0 ]; do case "$1" in -n) name=$2; shift ;; python=*) py=${1#python=} ;; esac; shift; done
    mkdir -p "$prefix/envs/$name/bin"
    printf '#!/bin/sh\necho "Python %s.0"\n' "$py" > "$prefix/envs/$name/bin/python"
    chmod +x "$prefix/envs/$name/bin/python" ;;
  --version) echo "conda 24.11.3" ;;
esac
CONDA
chmod +x "$prefix/bin/conda"
exit 0
"#,
    );
    text.push_str(&format!("# padding {}\n", "x".repeat(4000)));
    text.into_bytes()
}

#[test]
fn miniconda_resumes_its_download_from_a_local_server_installs_and_skips_the_second_time() {
    let installer = stand_in_miniconda();
    let server = Downloads::serve(vec![("/Miniconda3.sh", installer.clone())]);
    let sandbox = Sandbox::new();
    // A download cut after 1000 bytes, as a dropped link leaves it.
    let arch = String::from_utf8(
        Command::new("uname")
            .arg("-m")
            .output()
            .expect("uname")
            .stdout,
    )
    .expect("utf-8");
    let downloads = sandbox.home().join(".leasehold/downloads");
    std::fs::create_dir_all(&downloads).expect("downloads");
    let file = downloads.join(format!("Miniconda3-latest-Linux-{}.sh", arch.trim()));
    std::fs::write(file.with_extension("sh.part"), &installer[..1000]).expect("partial");
    std::fs::write(
        file.with_extension("sh.part.url"),
        format!("{}\n", server.url("/Miniconda3.sh")),
    )
    .expect("partial's URL");
    let text = script(
        Recipe::Miniconda,
        &options(
            Recipe::Miniconda,
            &[
                ("url", &server.url("/Miniconda3.sh")),
                ("env", "work"),
                ("python", "3.11"),
            ],
        ),
        &InstallFacts::default(),
    )
    .expect("script");
    let (code, out) = sandbox.run(&text, &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        server.seen(),
        vec![("/Miniconda3.sh".to_owned(), 1000)],
        "the download resumed at byte 1000"
    );
    assert_eq!(
        std::fs::read(&file).expect("installer"),
        installer,
        "resumed file is whole"
    );
    let prefix = sandbox.home().join("miniconda3");
    assert!(prefix.join("bin/conda").exists());
    assert!(prefix.join("envs/work/bin/python").exists());
    assert!(
        markers(&out, "result").contains(&"python_version=3.11.0".to_owned()),
        "{out}"
    );
    let bashrc = std::fs::read_to_string(sandbox.home().join(".bashrc")).expect("bashrc");
    assert!(bashrc.contains(">>> conda initialize >>>"));

    let (code, out) = sandbox.run(&text, &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        markers(&out, "skip").len(),
        3,
        "conda, init and env all skipped: {out}"
    );
    assert_eq!(server.seen().len(), 1, "nothing downloaded the second time");
}

/// A finished or partial download is kept only for the URL it came from: after the installer
/// option changes, the old file is neither reused nor resumed into.
#[test]
fn a_download_is_reused_or_resumed_only_for_the_same_url() {
    let first: Vec<u8> = (0..4000u32).map(|i| (i % 251) as u8).collect();
    let second: Vec<u8> = first.iter().rev().copied().collect();
    let server = Downloads::serve(vec![("/a", first.clone()), ("/b", second.clone())]);
    let sandbox = Sandbox::new();
    let dest = sandbox.home().join("file.bin");
    let fetch = |url: &str| {
        format!(
            "{}\nlh_download {} {}",
            super::script::PRELUDE,
            crate::shell::quote(url),
            crate::shell::quote(&dest.display().to_string())
        )
    };
    let (code, out) = sandbox.run(&fetch(&server.url("/a")), &[]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = sandbox.run(&fetch(&server.url("/a")), &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        markers(&out, "skip").len(),
        1,
        "the same URL is kept: {out}"
    );
    let (code, out) = sandbox.run(&fetch(&server.url("/b")), &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        std::fs::read(&dest).expect("file"),
        second,
        "another URL is fetched anew"
    );
    // A partial download of /a is not continued with /b's bytes.
    std::fs::remove_file(&dest).expect("rm");
    std::fs::write(dest.with_extension("bin.part"), &first[..1000]).expect("partial");
    std::fs::write(
        dest.with_extension("bin.part.url"),
        format!("{}\n", server.url("/a")),
    )
    .expect("partial's URL");
    let (code, out) = sandbox.run(&fetch(&server.url("/b")), &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        std::fs::read(&dest).expect("file"),
        second,
        "whole, from its start"
    );
    assert_eq!(
        server.seen(),
        vec![
            ("/a".to_owned(), 0),
            ("/b".to_owned(), 0),
            ("/b".to_owned(), 0)
        ],
        "each URL fetched from byte 0; the unchanged one not again"
    );
}

#[test]
fn ollama_installs_from_a_local_install_script() {
    let sandbox = Sandbox::new();
    let bin = sandbox.dir.path().join("bin");
    // The stand-in install.sh drops a stand-in `ollama` on PATH, as the real one installs it.
    let install_sh = format!(
        "#!/bin/sh\ncat > {bin}/ollama <<'EOF'\n#!/bin/sh\ncase \"$1\" in\n  list) echo 'NAME ID SIZE MODIFIED' ;;\n  pull) echo \"pulling 2bada8a74506: 100% ▕████████▏ 4.7 GB/4.7 GB\" ;;\n  serve) exit 0 ;;\n  --version) echo 'ollama version is 0.5.7' ;;\nesac\nEOF\nchmod +x {bin}/ollama\necho '>>> Install complete.'\n",
        bin = bin.display()
    );
    let server = Downloads::serve(vec![("/install.sh", install_sh.into_bytes())]);
    sandbox.tool(
        "curl",
        r#"case "$*" in
  *api/version*) echo '{"version":"0.5.7"}' ;;
  *api/generate*) echo '{"response":"hi","eval_count":30,"eval_duration":1000000000}' ;;
  *api/ps*) echo '{"models":[{"name":"m","size":8000,"size_vram":8000}]}' ;;
  *) exec /usr/bin/curl "$@" ;;
esac"#,
    );
    let text = script(
        Recipe::Ollama,
        &options(
            Recipe::Ollama,
            &[("install_url", &server.url("/install.sh"))],
        ),
        &InstallFacts {
            data_disk: Some("/nonexistent-data-disk".into()),
            ..InstallFacts::default()
        },
    )
    .expect("script");
    assert!(
        text.contains("LH_MODELS_DIR=/nonexistent-data-disk/ollama-models\n"),
        "models go to the data disk when there is one"
    );
    let text = script(
        Recipe::Ollama,
        &options(
            Recipe::Ollama,
            &[("install_url", &server.url("/install.sh"))],
        ),
        &InstallFacts::default(),
    )
    .expect("script");
    let (code, out) = sandbox.run(&text, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(">>> Install complete."), "{out}");
    assert!(
        markers(&out, "finding").is_empty(),
        "all in VRAM: no offload finding"
    );
    assert!(
        markers(&out, "result").contains(&"tokens_per_second=30.0".to_owned()),
        "{out}"
    );
    let (code, out) = sandbox.run(&text, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(
        markers(&out, "skip")
            .iter()
            .any(|s| s.starts_with("ollama already installed")),
        "{out}"
    );
}

/// The mirrors recipe takes the fastest pip index and Hugging Face endpoint the Verify network
/// probe measured; an unreachable one never wins however fast its failure was.
#[test]
fn mirrors_default_to_what_the_verify_probe_measured_fastest() {
    use crate::probe::network::{EndpointKind, EndpointTiming, NetworkFacts};
    let timing = |id: &str, kind, reachable, seconds| EndpointTiming {
        id: id.to_owned(),
        kind,
        url: format!("https://{id}.example"),
        reachable,
        http_status: reachable.then_some(200),
        seconds: Some(seconds),
        error: None,
    };
    let mut facts = crate::probe::Facts::empty(
        "root@gpu:22",
        chrono::TimeZone::with_ymd_and_hms(&chrono::Utc, 2026, 5, 1, 8, 0, 0).unwrap(),
    );
    facts.network = Some(NetworkFacts {
        endpoints: vec![
            timing("pypi", EndpointKind::Pypi, true, 2.5),
            timing("tuna", EndpointKind::PypiMirror, true, 0.4),
            timing("aliyun", EndpointKind::PypiMirror, false, 0.01),
            timing("huggingface", EndpointKind::HuggingFace, false, 0.02),
            timing("hf-mirror", EndpointKind::HuggingFaceMirror, true, 0.9),
        ],
        ..NetworkFacts::default()
    });
    let install = InstallFacts::from_facts(&facts);
    assert_eq!(install.fastest_pip.as_deref(), Some("tsinghua"));
    assert_eq!(install.fastest_hf.as_deref(), Some("hf-mirror"));
    let text = script(Recipe::Mirrors, &options(Recipe::Mirrors, &[]), &install).expect("script");
    assert!(
        text.contains("https://pypi.tuna.tsinghua.edu.cn/simple"),
        "{text}"
    );
    assert!(text.contains("https://hf-mirror.com"), "{text}");
    // What the user chose wins over the measurement.
    let chosen = script(
        Recipe::Mirrors,
        &options(Recipe::Mirrors, &[("pip", "ustc"), ("hf", "official")]),
        &install,
    )
    .expect("script");
    assert!(
        chosen.contains("https://mirrors.ustc.edu.cn/pypi/simple"),
        "{chosen}"
    );
    assert!(!chosen.contains("https://hf-mirror.com"), "{chosen}");
}
