//! Process-shared POSIX synchronisation objects in shared memory (`sem_t`,
//! `pthread_mutex_t`, `pthread_rwlock_t`), as the original used them, with every
//! wait cut into bounded slices so that a [`Guard`] can end it.

use super::error::KvError;
use super::guard::Guard;
use std::cell::UnsafeCell;
use std::time::{Duration, Instant};

// glibc's timed reader-writer locks, which the libc crate does not declare.
unsafe extern "C" {
    fn pthread_rwlock_timedrdlock(
        lock: *mut libc::pthread_rwlock_t,
        abstime: *const libc::timespec,
    ) -> libc::c_int;
    fn pthread_rwlock_timedwrlock(
        lock: *mut libc::pthread_rwlock_t,
        abstime: *const libc::timespec,
    ) -> libc::c_int;
}

/// How long one slice of a wait lasts.
pub(crate) const SLICE: Duration = Duration::from_millis(20);

fn deadline(d: Duration) -> libc::timespec {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut now) };
    let mut ns: i64 = now.tv_nsec + i64::from(d.subsec_nanos());
    let mut s: i64 = now.tv_sec + d.as_secs() as i64;
    if ns >= 1_000_000_000 {
        ns -= 1_000_000_000;
        s += 1;
    }
    libc::timespec {
        tv_sec: s as _,
        tv_nsec: ns as _,
    }
}

/// A process-shared semaphore.
#[repr(C)]
pub(crate) struct Sem(UnsafeCell<libc::sem_t>);

impl Sem {
    /// Initialises a semaphore at `p` with `value`.
    ///
    /// # Safety
    /// `p` points into a shared mapping nobody else uses yet.
    pub(crate) unsafe fn init(p: *mut Sem, value: u32) -> Result<(), KvError> {
        // SAFETY: the caller's promise; pshared = 1 for a semaphore in shared memory.
        let r = unsafe { libc::sem_init(p.cast(), 1, value) };
        if r != 0 {
            return Err(KvError::Io {
                op: "sem_init",
                source: std::io::Error::last_os_error(),
            });
        }
        Ok(())
    }

    /// `sem_post`.
    #[inline]
    pub(crate) fn post(&self) {
        // SAFETY: an initialised semaphore in a live mapping.
        unsafe { libc::sem_post(self.0.get()) };
    }

    /// `sem_trywait`: true when taken.
    pub(crate) fn try_wait(&self) -> bool {
        // SAFETY: as above.
        unsafe { libc::sem_trywait(self.0.get()) == 0 }
    }

    /// `sem_timedwait` for `d`: true when taken, false on timeout.
    #[inline]
    pub(crate) fn timed_wait(&self, d: Duration) -> bool {
        let ts = deadline(d);
        loop {
            // SAFETY: as above.
            if unsafe { libc::sem_timedwait(self.0.get(), &ts) } == 0 {
                return true;
            }
            if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return false;
            }
        }
    }

    /// `sem_wait`, in slices checked by `guard`.
    #[inline]
    pub(crate) fn wait(&self, guard: &Guard<'_>, what: &'static str) -> Result<(), KvError> {
        // The uncontended case first, as sem_wait does.
        if self.try_wait() {
            return Ok(());
        }
        let since = Instant::now();
        loop {
            if self.timed_wait(SLICE) {
                return Ok(());
            }
            guard.check(since, what)?;
        }
    }
}

/// A process-shared mutex.
#[repr(C)]
pub(crate) struct PMutex(UnsafeCell<libc::pthread_mutex_t>);

impl PMutex {
    /// # Safety
    /// `p` points into a shared mapping nobody else uses yet.
    pub(crate) unsafe fn init(p: *mut PMutex) -> Result<(), KvError> {
        // SAFETY: attr is initialised before use and destroyed after; the mutex
        // memory is the caller's.
        unsafe {
            let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
            libc::pthread_mutexattr_init(&mut attr);
            libc::pthread_mutexattr_setpshared(&mut attr, libc::PTHREAD_PROCESS_SHARED);
            let r = libc::pthread_mutex_init(p.cast(), &attr);
            libc::pthread_mutexattr_destroy(&mut attr);
            if r != 0 {
                return Err(KvError::Io {
                    op: "pthread_mutex_init",
                    source: std::io::Error::from_raw_os_error(r),
                });
            }
        }
        Ok(())
    }

    /// Locks, in slices checked by `guard`.
    #[inline]
    pub(crate) fn lock(&self, guard: &Guard<'_>, what: &'static str) -> Result<(), KvError> {
        // SAFETY: an initialised mutex in a live mapping.
        if unsafe { libc::pthread_mutex_trylock(self.0.get()) } == 0 {
            return Ok(());
        }
        let since = Instant::now();
        loop {
            let ts = deadline(SLICE);
            // SAFETY: as above.
            if unsafe { libc::pthread_mutex_timedlock(self.0.get(), &ts) } == 0 {
                return Ok(());
            }
            guard.check(since, what)?;
        }
    }

    /// Unlocks.
    #[inline]
    pub(crate) fn unlock(&self) {
        // SAFETY: locked by this thread.
        unsafe { libc::pthread_mutex_unlock(self.0.get()) };
    }
}

/// A process-shared reader-writer lock.
#[repr(C)]
pub(crate) struct PRwLock(UnsafeCell<libc::pthread_rwlock_t>);

impl PRwLock {
    /// # Safety
    /// `p` points into a shared mapping nobody else uses yet.
    pub(crate) unsafe fn init(p: *mut PRwLock) -> Result<(), KvError> {
        // SAFETY: as for PMutex::init.
        unsafe {
            let mut attr: libc::pthread_rwlockattr_t = std::mem::zeroed();
            libc::pthread_rwlockattr_init(&mut attr);
            libc::pthread_rwlockattr_setpshared(&mut attr, libc::PTHREAD_PROCESS_SHARED);
            let r = libc::pthread_rwlock_init(p.cast(), &attr);
            libc::pthread_rwlockattr_destroy(&mut attr);
            if r != 0 {
                return Err(KvError::Io {
                    op: "pthread_rwlock_init",
                    source: std::io::Error::from_raw_os_error(r),
                });
            }
        }
        Ok(())
    }

    /// Read-locks, in slices checked by `guard`.
    #[inline]
    pub(crate) fn read(&self, guard: &Guard<'_>, what: &'static str) -> Result<(), KvError> {
        // SAFETY: an initialised lock in a live mapping.
        if unsafe { libc::pthread_rwlock_tryrdlock(self.0.get()) } == 0 {
            return Ok(());
        }
        let since = Instant::now();
        loop {
            let ts = deadline(SLICE);
            // SAFETY: as above.
            if unsafe { pthread_rwlock_timedrdlock(self.0.get(), &ts) } == 0 {
                return Ok(());
            }
            guard.check(since, what)?;
        }
    }

    /// Write-locks, in slices checked by `guard`.
    #[inline]
    pub(crate) fn write(&self, guard: &Guard<'_>, what: &'static str) -> Result<(), KvError> {
        // SAFETY: as above.
        if unsafe { libc::pthread_rwlock_trywrlock(self.0.get()) } == 0 {
            return Ok(());
        }
        let since = Instant::now();
        loop {
            let ts = deadline(SLICE);
            // SAFETY: as above.
            if unsafe { pthread_rwlock_timedwrlock(self.0.get(), &ts) } == 0 {
                return Ok(());
            }
            guard.check(since, what)?;
        }
    }

    /// Unlocks.
    #[inline]
    pub(crate) fn unlock(&self) {
        // SAFETY: locked by this thread.
        unsafe { libc::pthread_rwlock_unlock(self.0.get()) };
    }
}
