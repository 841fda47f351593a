//! Giving freed memory back to the system while noggin serves.
//!
//! glibc's allocator keeps a pool of memory for each of up to eight
//! threads a core, and keeps what is freed in it. Under many clients (16
//! writing answers for a minute) a server's RSS grew from 28 MB to 250–300 MB
//! and stayed there, though it needs a fifth of that. Capping the pools
//! (`M_ARENA_MAX`) held it at 65–75 MB but made a cold index 20% slower;
//! trimming after every commit cost a fifth of the answers a second. So a
//! live noggin trims all pools now and then, off every request's path.

use std::time::Duration;

/// How often a live noggin gives freed memory back.
pub const TRIM_EVERY: Duration = Duration::from_secs(10);

/// Starts, once per process, the thread that gives freed memory back every
/// [`TRIM_EVERY`]. Nothing to do where the allocator is not glibc's.
pub fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static STARTED: std::sync::Once = std::sync::Once::new();
        STARTED.call_once(|| {
            let spawned = std::thread::Builder::new()
                .name("noggin-trim".into())
                .spawn(|| loop {
                    std::thread::sleep(TRIM_EVERY);
                    // SAFETY: malloc_trim only returns free pages of the
                    // allocator's own pools to the system.
                    unsafe {
                        libc::malloc_trim(0);
                    }
                });
            if let Err(error) = spawned {
                tracing::warn!(%error, "cannot start giving freed memory back");
            }
        });
    }
}
