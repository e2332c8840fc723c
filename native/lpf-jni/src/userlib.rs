//! SPMD functions from a user's shared library: `dlopen(path)` + `dlsym(symbol)`, the
//! symbol being a C `lpf_spmd_t` compiled against `lpf/core.h`.
//!
//! The user's library is built without linking `liblpf_core` (`cc -shared -fPIC`); its
//! `lpf_*` references resolve to the copy of the C ABI inside this library. For that,
//! this library (loaded by the JVM with `RTLD_LOCAL`) is first re-opened with
//! `RTLD_GLOBAL | RTLD_NOLOAD`, which puts its symbols in the global scope. Libraries
//! stay loaded until the JVM exits (unloading code that another thread may still run is
//! never safe, and a JVM loads a handful at most).

use lpf_core::{lpf_args_t, lpf_pid_t, lpf_t};
use std::collections::HashMap;
use std::ffi::{c_void, CStr, CString};
use std::sync::{Mutex, OnceLock};

pub(crate) type CSpmdFn = unsafe extern "C" fn(lpf_t, lpf_pid_t, lpf_pid_t, lpf_args_t);

fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a C string valid until the next dl* call on this
    // thread; it is copied at once.
    unsafe {
        let e = libc::dlerror();
        if e.is_null() {
            "unknown dl error".to_string()
        } else {
            CStr::from_ptr(e).to_string_lossy().into_owned()
        }
    }
}

/// Puts this library's symbols (the `lpf_*` C ABI) into the process's global scope.
fn export_self() -> Result<(), String> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        // SAFETY: dladdr only reads; the address is one of this library's functions.
        unsafe {
            let mut info: libc::Dl_info = std::mem::zeroed();
            let here = export_self as *const c_void;
            if libc::dladdr(here, &mut info) == 0 || info.dli_fname.is_null() {
                return Err("cannot find the path of the LPF native library (dladdr failed)".to_string());
            }
            let me = libc::dlopen(info.dli_fname, libc::RTLD_NOW | libc::RTLD_NOLOAD | libc::RTLD_GLOBAL);
            if me.is_null() {
                return Err(format!(
                    "cannot export the LPF C ABI of {} to user libraries: {}",
                    CStr::from_ptr(info.dli_fname).to_string_lossy(),
                    dl_error()
                ));
            }
            Ok(())
        }
    })
    .clone()
}

/// The SPMD function `symbol` of the shared library at `path` (opened once per JVM).
pub(crate) fn load(path: &str, symbol: &str) -> Result<CSpmdFn, String> {
    export_self()?;
    static OPEN: OnceLock<Mutex<HashMap<String, usize>>> = OnceLock::new();
    let mut open = OPEN.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    let c_path = CString::new(path).map_err(|_| format!("library path {path:?} contains a NUL byte"))?;
    let c_sym = CString::new(symbol).map_err(|_| format!("symbol {symbol:?} contains a NUL byte"))?;
    let handle = match open.get(path) {
        Some(&h) => h as *mut c_void,
        None => {
            // SAFETY: dlopen runs the library's initialisers, which is what loading it means.
            let h = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
            if h.is_null() {
                return Err(format!("cannot load the SPMD library {path}: {}", dl_error()));
            }
            open.insert(path.to_string(), h as usize);
            h
        }
    };
    // SAFETY: handle is a live dlopen handle.
    let f = unsafe { libc::dlsym(handle, c_sym.as_ptr()) };
    if f.is_null() {
        return Err(format!("the library {path} has no symbol {symbol}: {}", dl_error()));
    }
    // SAFETY: the user declares `symbol` to be an lpf_spmd_t; a function pointer and a
    // data pointer have the same size on the platforms this builds for.
    Ok(unsafe { std::mem::transmute::<*mut c_void, CSpmdFn>(f) })
}
