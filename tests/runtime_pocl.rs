//! The runtime measured as a plain program measures it, on a real OpenCL driver (PoCL's CPU
//! device in CI): a host-timed launch asks the driver for no event, `calibrate` reports the
//! harness beside the plain loop, and a work-group the device cannot take is the driver's
//! refusal, not ours.

mod common;

use clvscu::backend::{PlainLoops, Runtime};
use std::sync::{Mutex, MutexGuard};

use clvscu::backend::opencl::{self, OpenClBackend};
use clvscu::backend::{
    Arg, Backend, BackendError, CompileRequest, KernelId, LaunchShape, PlainLoop, TimerKind,
    WaitMode,
};
use clvscu::calibrate::{self, CalibrationPlan};
use clvscu::kernels::KernelSources;

/// PoCL lists no device when two threads open it at once: the tests take turns.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn backend() -> (MutexGuard<'static, ()>, OpenClBackend) {
    let turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    common::need("OpenCL", opencl::availability());
    (turn, OpenClBackend::open(None).expect("open OpenCL device"))
}

/// The empty kernel and its arguments.
fn empty_kernel(b: &mut OpenClBackend) -> (KernelId, Vec<Arg>) {
    let request = CompileRequest {
        source: KernelSources::embedded().program(b.api(), "peak").unwrap(),
        defines: vec![
            ("WG_SIZE".into(), "1".into()),
            ("FMA_ITERS".into(), "1".into()),
        ],
        flags: vec![],
        jit: Default::default(),
    };
    let program = b.compile(&request).unwrap();
    let kernel = b.kernel(program, "launch_empty").unwrap();
    let input = b.alloc(1).unwrap();
    let out = b.alloc(1).unwrap();
    (
        kernel,
        vec![Arg::Buffer(input), Arg::Buffer(out), Arg::U32(3)],
    )
}

/// Events asked of the driver by `count` launches of `batch`, in a timer and wait mode.
fn events_of(
    b: &mut OpenClBackend,
    (kernel, args): &(KernelId, Vec<Arg>),
    (timer, wait): (TimerKind, WaitMode),
    batch: u32,
) -> (u64, u64) {
    b.set_timer(timer).unwrap();
    b.set_wait_mode(wait).unwrap();
    let before = b.calls();
    for _ in 0..20 {
        b.launch_repeated(*kernel, LaunchShape::linear(1, 1), args, batch)
            .unwrap();
    }
    let after = b.calls();
    (
        after.launches - before.launches,
        after.events - before.events,
    )
}

#[test]
#[ignore = "needs OpenCL"]
fn a_host_timed_launch_asks_the_driver_for_no_event() {
    let (_turn, mut b) = backend();
    let k = empty_kernel(&mut b);
    let host_finish = (TimerKind::WallClock, WaitMode::Finish);
    assert_eq!(events_of(&mut b, &k, host_finish, 1), (20, 0));
    assert_eq!(events_of(&mut b, &k, host_finish, 50), (1000, 0));
    // An event wait needs one event, the last launch's, whatever the batch.
    let host_spin = (TimerKind::WallClock, WaitMode::Spin);
    assert_eq!(events_of(&mut b, &k, host_spin, 1), (20, 20));
    assert_eq!(events_of(&mut b, &k, host_spin, 50), (1000, 20));
    // The device clock needs the first and the last launch's events.
    let device = (TimerKind::DeviceEvent, WaitMode::Finish);
    assert_eq!(events_of(&mut b, &k, device, 1), (20, 20));
    assert_eq!(events_of(&mut b, &k, device, 50), (1000, 40));
    // And the kernel ran: it stored its argument.
    let mut got = [0.0f32];
    if let Arg::Buffer(out) = k.1[1] {
        b.download(out, &mut got).unwrap();
    }
    assert_eq!(got[0], 3.0);
}

#[test]
#[ignore = "needs OpenCL"]
fn a_refused_transfer_asks_the_driver_for_nothing() {
    let (_turn, mut b) = backend();
    common::a_refused_transfer_counts_no_call(&mut b);
}

#[test]
#[ignore = "needs PoCL"]
fn the_plain_level_loop_writes_launches_and_reads_its_flag_every_repetition() {
    let (_turn, mut b) = backend();
    let (kernel, args) = empty_kernel(&mut b);
    let plan = PlainLoop {
        shape: LaunchShape::linear(1, 1),
        wait: WaitMode::Finish,
        batch: 2,
        reps: 5,
        flag_copies: true,
    };
    let flag = clvscu::backend::first_buffer(&args).expect("a buffer argument");
    b.upload(flag, &[3.0]).unwrap();
    let times = b.plain_launches(kernel, &args, plan).unwrap();
    assert_eq!(times.len(), 5);
    assert!(times.iter().all(|t| *t > 0.0 && t.is_finite()), "{times:?}");
    let mut word = [1.0f32];
    b.download(flag, &mut word).unwrap();
    assert_eq!(
        word[0], 0.0,
        "the plain loop wrote its zero word into the flag"
    );
}

#[test]
#[ignore = "needs OpenCL"]
fn the_plain_loop_times_every_repetition_in_every_wait_mode() {
    let (_turn, mut b) = backend();
    let (kernel, args) = empty_kernel(&mut b);
    for &wait in WaitMode::ALL {
        let plan = PlainLoop {
            shape: LaunchShape::linear(1, 1),
            wait,
            batch: 5,
            reps: 7,
            flag_copies: false,
        };
        let times = b.plain_launches(kernel, &args, plan).unwrap();
        assert_eq!(times.len(), 7, "{wait}");
        assert!(
            times.iter().all(|t| *t > 0.0 && t.is_finite()),
            "{wait}: {times:?}"
        );
    }
}

#[test]
#[ignore = "needs OpenCL"]
fn calibrate_reports_the_harness_beside_the_plain_loop_on_opencl() {
    let (_turn, mut b) = backend();
    let plan = CalibrationPlan {
        reps: 20,
        chunk: 5,
        ..CalibrationPlan::quick()
    };
    let mut backends: Vec<&mut dyn Runtime> = vec![&mut b];
    let found = calibrate::calibrate(&mut backends, &KernelSources::embedded(), &plan).unwrap();
    // Every wait mode, one at a time and back to back, and the level case, both paths timed.
    assert_eq!(
        found.rows.len(),
        WaitMode::ALL.len() * plan.batches.len() + 1
    );
    let level = found
        .rows
        .iter()
        .find(|r| r.wait == calibrate::LEVEL_WAIT)
        .expect("the level case");
    assert!(level.harness_us > 0.0 && level.plain_us > 0.0, "{level:?}");
    assert!(
        level.wait_calls.contains("clEnqueueReadBuffer"),
        "{level:?}"
    );
    for r in found
        .rows
        .iter()
        .filter(|r| r.wait != calibrate::LEVEL_WAIT)
    {
        assert_eq!(r.api, "OpenCL");
        assert!(r.harness_us > 0.0 && r.plain_us > 0.0, "{r:?}");
        assert!(r.harness_ci_lo_us <= r.harness_us && r.harness_us <= r.harness_ci_hi_us);
        let expected_events = if r.wait == "finish" {
            0.0
        } else {
            1.0 / r.batch as f64
        };
        assert!(
            (r.harness_events_per_launch - expected_events).abs() < 1e-9,
            "{r:?}"
        );
    }
    // One API: no PR, and the report says what it measured.
    assert!(found.prs.is_empty());
    let text = calibrate::markdown(&found);
    assert!(text.contains("clFinish") && text.contains("harness µs") && text.contains("plain µs"));
    let dir = tempfile::tempdir().unwrap();
    calibrate::write(dir.path(), &found, "test").unwrap();
    for f in [
        clvscu::rows::CALIBRATION_CSV,
        clvscu::rows::CALIBRATION_PR_CSV,
        calibrate::REPORT_MD,
    ] {
        assert!(dir.path().join(f).exists(), "{f}");
    }
}

#[test]
#[ignore = "needs OpenCL"]
fn a_work_group_the_device_cannot_take_is_the_drivers_refusal_with_the_limits() {
    let (_turn, mut b) = backend();
    let (kernel, args) = empty_kernel(&mut b);
    let too_big = b.info().max_work_group_size * 2;
    b.set_timer(TimerKind::WallClock).unwrap();
    let e = b
        .launch(kernel, LaunchShape::linear(1, too_big), &args)
        .unwrap_err();
    let BackendError::WorkGroupRefused {
        requested,
        device_limit,
        detail,
        ..
    } = &e
    else {
        panic!("not a work-group refusal: {e}");
    };
    assert_eq!(*requested, too_big);
    assert_eq!(*device_limit, b.info().max_work_group_size);
    // The driver's own answer is in the error: the launch reached clEnqueueNDRangeKernel.
    assert!(detail.contains("clEnqueueNDRangeKernel"), "{detail}");
    assert!(detail.contains("CL_INVALID"), "{detail}");
}
