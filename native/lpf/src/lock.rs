//! Locking shared state that a panicking process may have held.

/// Locks `m` also when a thread panicked holding it: a panic in an LPF process fails
/// its section, and the other processes must still reach the shared state to fail
/// theirs.
pub(crate) fn relock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
