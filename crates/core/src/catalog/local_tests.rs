use super::*;
use crate::catalog::estimate::{estimate, EstimateRequest};

fn laptop(name: &str, mib: u64) -> Detection {
    Detection::Found {
        driver_version: Some("560.35.03".to_owned()),
        gpus: vec![LocalGpu {
            index: 0,
            name: name.to_owned(),
            memory_total_mib: mib,
            compute_capability: Some("8.9".to_owned()),
            catalog_id: None,
        }],
    }
}

fn seven_b(precision: &str) -> crate::catalog::Estimate {
    estimate(&EstimateRequest {
        params_b: Some(7.0),
        precision: precision.parse().expect("valid precision"),
        ..EstimateRequest::default()
    })
    .expect("valid")
}

#[test]
fn without_nvml_the_report_is_calm_and_says_there_is_no_local_gpu() {
    let report = local_gpu_report(
        &Detection::Unavailable(Unavailable::NoDriver),
        Some(&seven_b("fp16")),
    );
    assert!(!report.available);
    assert!(report.gpus.is_empty() && report.fit.is_none());
    let reason = report.reason.expect("a reason is given");
    assert!(reason.contains("No local NVIDIA GPU"), "{reason}");
    assert!(report.reason_text.is_some_and(|t| t.zh.contains("NVIDIA")));
}

#[test]
fn a_driver_that_sees_no_gpu_reads_as_no_local_gpu() {
    let empty = Detection::Found {
        driver_version: Some("550.54.14".to_owned()),
        gpus: vec![],
    };
    let report = local_gpu_report(&empty, None);
    assert!(!report.available);
    assert!(report.reason.is_some_and(|r| r.contains("sees no GPU")));
}

#[test]
fn a_task_that_fits_the_local_gpu_says_renting_is_optional() {
    let report = local_gpu_report(
        &laptop("NVIDIA GeForce RTX 4070 Laptop GPU", 12282),
        Some(&seven_b("q4_k_m")),
    );
    let fit = report.fit.expect("an estimate was given");
    assert!(fit.fits, "q4_k_m 7B (~5.5 GiB) fits 12 GiB");
    assert!(
        fit.message.en.contains("renting is optional"),
        "{}",
        fit.message.en
    );
    assert!(fit.message.en.contains("RTX 4070"));
}

#[test]
fn a_task_too_big_for_the_local_gpu_says_how_much_is_needed() {
    let report = local_gpu_report(
        &laptop("NVIDIA GeForce RTX 4070 Laptop GPU", 12282),
        Some(&seven_b("fp16")),
    );
    let fit = report.fit.expect("an estimate was given");
    assert!(!fit.fits);
    assert!(fit.message.en.contains("needs"), "{}", fit.message.en);
}

#[test]
fn detection_on_this_machine_never_fails_and_agrees_with_the_report() {
    // Real NVML: on machines without an NVIDIA driver this exercises the library-not-found path.
    let detection = detect_local_gpus();
    let report = local_gpu_report(&detection, None);
    match detection {
        Detection::Unavailable(_) => assert!(!report.available && report.reason.is_some()),
        Detection::Found { ref gpus, .. } => assert_eq!(report.available, !gpus.is_empty()),
    }
}

#[test]
fn nvml_errors_map_to_the_user_facing_reasons() {
    assert_eq!(classify(&NvmlError::LibraryNotFound), Unavailable::NoDriver);
    assert_eq!(
        classify(&NvmlError::DriverNotLoaded),
        Unavailable::DriverNotLoaded
    );
    assert_eq!(
        classify(&NvmlError::LibRmVersionMismatch),
        Unavailable::DriverMismatch
    );
    assert!(matches!(
        classify(&NvmlError::Unknown),
        Unavailable::Other(_)
    ));
}

#[test]
fn checking_this_computer_refuses_a_bad_task_and_otherwise_always_reports() {
    let bad = EstimateRequest {
        params_b: Some(-7.0),
        ..EstimateRequest::default()
    };
    let err = check_local_gpus(Some(&bad)).expect_err("a negative model size is bad input");
    assert!(crate::Coded::is_bad_input(&err), "{err}");

    let plain = check_local_gpus(None).expect("no task: nothing to refuse");
    assert!(plain.fit.is_none(), "no task, no fit verdict");
    let with_task = check_local_gpus(Some(&EstimateRequest {
        params_b: Some(7.0),
        ..EstimateRequest::default()
    }))
    .expect("a valid task");
    assert_eq!(
        with_task.available, plain.available,
        "the task changes the verdict, not what was found"
    );
    assert_eq!(
        with_task.fit.is_some(),
        with_task.available,
        "a fit verdict exactly when a GPU was found"
    );
}
