use super::*;

fn choose(driver: &str, gpu: Option<&str>, cc: Option<&str>) -> TorchWheelChoice {
    choose_torch_wheel(&TorchWheelRequest {
        driver: driver.to_owned(),
        gpu: gpu.map(str::to_owned),
        compute_cap: cc.map(str::to_owned),
    })
    .expect("valid request")
}

#[test]
fn rtx_5090_on_the_570_driver_gets_cu128() {
    let choice = choose("570.124.06", Some("NVIDIA GeForce RTX 5090"), None);
    assert_eq!(choice.cuda_tag.as_deref(), Some("cu128"), "{}", choice.reason);
    assert_eq!(choice.index_url, "https://download.pytorch.org/whl/cu128");
    assert!(choice.torch_versions.starts_with("2.7"), "Blackwell wheels start at 2.7: {}", choice.torch_versions);
    assert!(choice.reason.contains("2.7"), "the reason mentions the Blackwell minimum: {}", choice.reason);
}

#[test]
fn rtx_5090_on_the_535_driver_gets_no_wheel_and_is_told_to_upgrade_or_recreate() {
    let choice = choose("535.104.05", Some("NVIDIA GeForce RTX 5090"), None);
    assert_eq!(choice.cuda_tag, None, "535 predates Blackwell support");
    assert!(choice.index_url.is_empty());
    assert!(choice.reason.contains("upgrade") || choice.reason.contains("upgraded"), "{}", choice.reason);
    assert!(choice.reason.contains("re-create"), "{}", choice.reason);
}

#[test]
fn v100_on_a_580_driver_never_gets_cu130_which_dropped_volta() {
    let choice = choose("580.65.06", Some("Tesla V100-SXM2-16GB"), None);
    let tag = choice.cuda_tag.as_deref().expect("some wheel fits a V100");
    assert_ne!(tag, "cu130");
    assert_ne!(tag, "cu132");
    assert!(tag.starts_with("cu12"), "a cu12x wheel still carries sm_70: {tag}");
}

#[test]
fn a100_on_the_first_12x_driver_gets_a_cu12x_wheel_through_minor_version_compatibility() {
    let choice = choose("525.60.13", Some("NVIDIA A100-SXM4-80GB"), None);
    let tag = choice.cuda_tag.as_deref().expect("a cu12x wheel fits");
    assert!(tag.starts_with("cu12"), "got {tag}");
    assert!(choice.reason.contains("minor-version compatibility"), "{}", choice.reason);
}

#[test]
fn rtx_4090_on_a_470_driver_gets_cu118_the_last_11x_wheel() {
    // 470 ≥ 450.80.02 (11.x family minimum) but < 525.60.13 (12.x): only cu118 qualifies, and
    // sm_86 kernels run on the 4090's sm_89.
    let choice = choose("470.82.01", Some("NVIDIA GeForce RTX 4090"), None);
    assert_eq!(choice.cuda_tag.as_deref(), Some("cu118"), "{}", choice.reason);
    assert!(choice.torch_versions.ends_with("2.7"), "cu118 ends with PyTorch 2.7: {}", choice.torch_versions);
}

#[test]
fn a_driver_older_than_every_family_gets_no_wheel() {
    let choice = choose("440.33.01", Some("Tesla T4"), None);
    assert_eq!(choice.cuda_tag, None);
    assert!(choice.reason.contains("450.80.02") || choice.reason.contains("driver"), "{}", choice.reason);
}

#[test]
fn new_drivers_get_the_newest_stable_wheel_for_the_gpu() {
    let h100 = choose("580.95.05", Some("NVIDIA H100 80GB HBM3"), None);
    assert_eq!(h100.cuda_tag.as_deref(), Some("cu130"), "{}", h100.reason);
    let h100_575 = choose("575.57.08", Some("NVIDIA H100 80GB HBM3"), None);
    assert_eq!(h100_575.cuda_tag.as_deref(), Some("cu126"), "13.x needs 580; cu126 ships with the newest PyTorch");
}

#[test]
fn an_explicit_compute_capability_wins_over_the_catalog() {
    // An unknown name with sm_120 must still get a Blackwell-capable wheel.
    let choice = choose("570.124.06", Some("Some Future GPU"), Some("12.0"));
    assert_eq!(choice.cuda_tag.as_deref(), Some("cu128"));
    assert!(choice.arch_checked);
}

#[test]
fn an_unknown_gpu_without_compute_capability_is_chosen_by_driver_and_says_so() {
    let choice = choose("560.35.05", Some("Mystery Accelerator 9000"), None);
    assert!(choice.cuda_tag.is_some(), "the driver alone still allows a choice");
    assert!(!choice.arch_checked);
    assert!(choice.reason.contains("not checked"), "{}", choice.reason);
}

#[test]
fn bad_driver_or_compute_capability_text_is_bad_input() {
    let err = choose_torch_wheel(&TorchWheelRequest {
        driver: "latest".to_owned(),
        gpu: None,
        compute_cap: None,
    })
    .expect_err("not a version");
    assert_eq!(crate::Coded::code(&err), "catalog.bad_driver_version");
    let err = choose_torch_wheel(&TorchWheelRequest {
        driver: "570.124.06".to_owned(),
        gpu: None,
        compute_cap: Some("fast".to_owned()),
    })
    .expect_err("not a capability");
    assert!(crate::Coded::is_bad_input(&err));
}

#[test]
fn wheel_support_follows_binary_compatibility_within_a_major_version() {
    let cu126 = wheels().iter().find(|w| w.tag == "cu126").expect("cu126 in the matrix");
    assert_eq!(cu126.supports(MajorMinor::new(8, 9)), Some(true), "sm_86 runs on sm_89");
    assert_eq!(cu126.supports(MajorMinor::new(12, 0)), Some(false), "no sm_12x in cu126");
    let cu130 = wheels().iter().find(|w| w.tag == "cu130").expect("cu130 in the matrix");
    assert_eq!(cu130.supports(MajorMinor::new(7, 0)), Some(false), "sm_75 does not run on sm_70");
    let cu124 = wheels().iter().find(|w| w.tag == "cu124").expect("cu124 in the matrix");
    assert_eq!(cu124.supports(MajorMinor::new(8, 0)), None, "unknown list, unknown answer");
}
