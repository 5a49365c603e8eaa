//! A watchdog over every launch: a kernel that never ends blocks its thread inside the driver,
//! so a thread of its own calls `on_expiry` once a launch passes its limit (the binary ends the
//! process there with its own exit code; every finished comparison is already on disk).

use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// Without `timeout` or `--timeout`, the limit of a first launch (verification, first-use costs).
pub const FIRST_LAUNCH_LIMIT: Duration = Duration::from_secs(120);
/// Later launches may take this many times the verification launch...
pub const EXPECTED_FACTOR: u32 = 100;
/// ...but are never cut shorter than this.
pub const MIN_LIMIT: Duration = Duration::from_secs(10);

/// What is being watched, kept in parts so that arming allocates nothing: a launch is armed
/// thousands of times a second, and a small allocation that outlives a large free keeps the
/// allocator from returning memory (a soak sees resident memory climb).
#[derive(Debug, Clone)]
pub struct Watched {
    /// `verification`, `warm-up`, `timed run`.
    pub phase: &'static str,
    pub comparison: Arc<str>,
    pub api: crate::rows::Api,
}

impl std::fmt::Display for Watched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} of {} on {}", self.phase, self.comparison, self.api)
    }
}

#[derive(Debug, Clone)]
struct Armed {
    what: Watched,
    since: Instant,
    limit: Duration,
}

/// The launch being watched, shared with the watchdog thread.
#[derive(Debug, Clone, Default)]
pub struct Watchdog {
    armed: Arc<Mutex<Option<Armed>>>,
}

impl Watchdog {
    /// Starts the thread that calls `on_expiry(what, ran_for, limit)` once a launch runs late.
    pub fn start(on_expiry: impl Fn(&str, Duration, Duration) + Send + 'static) -> Watchdog {
        let dog = Watchdog::default();
        let watched = dog.clone();
        thread::spawn(move || loop {
            thread::sleep(crate::study::limits::WATCHDOG_TICK);
            // Looked at in place: a tick allocates nothing unless a launch has expired.
            let expired = watched
                .armed
                .lock()
                .ok()
                .and_then(|g| g.as_ref().filter(|a| a.since.elapsed() > a.limit).cloned());
            if let Some(a) = expired {
                on_expiry(&a.what.to_string(), a.since.elapsed(), a.limit);
                watched.disarm();
            }
        });
        dog
    }

    /// Watches `what` for at most `limit` from now, until [`Watchdog::disarm`].
    pub fn arm(&self, what: Watched, limit: Duration) {
        if let Ok(mut g) = self.armed.lock() {
            *g = Some(Armed {
                what,
                since: Instant::now(),
                limit,
            });
        }
    }

    pub fn disarm(&self) {
        if let Ok(mut g) = self.armed.lock() {
            *g = None;
        }
    }

    /// How long the launch being watched has run, if one is.
    pub fn busy_for(&self) -> Option<Duration> {
        self.armed
            .lock()
            .ok()
            .and_then(|g| g.as_ref().map(|a| a.since.elapsed()))
    }
}

/// The limit of the launches after verification, from the verification's wall time.
pub fn expected_limit(verification: Duration) -> Duration {
    (verification * EXPECTED_FACTOR).max(MIN_LIMIT)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn a_launch_past_its_limit_is_reported_once_and_a_finished_one_never() {
        let fired = Arc::new(AtomicUsize::new(0));
        let count = fired.clone();
        let dog = Watchdog::start(move |what, ran, limit| {
            assert_eq!(what, "verification of stuck on CUDA");
            assert!(ran > limit);
            count.fetch_add(1, Ordering::SeqCst);
        });
        let watched = |c: &str| Watched {
            phase: "verification",
            comparison: Arc::from(c),
            api: crate::rows::Api::Cuda,
        };
        dog.arm(watched("quick"), Duration::from_millis(100));
        dog.disarm();
        dog.arm(watched("stuck"), Duration::from_millis(60));
        assert!(dog.busy_for().is_some());
        thread::sleep(Duration::from_millis(400));
        assert_eq!(fired.load(Ordering::SeqCst), 1);
        assert!(dog.busy_for().is_none());
    }

    #[test]
    fn later_launches_get_a_multiple_of_verification_but_a_floor() {
        assert_eq!(expected_limit(Duration::from_millis(1)), MIN_LIMIT);
        assert_eq!(
            expected_limit(Duration::from_secs(1)),
            Duration::from_secs(100)
        );
    }
}
