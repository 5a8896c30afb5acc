//! The C functions `export!` generates: one monomorphised set per
//! [`Transport`] type, turning the ABI's raw pointers into the safe traits' calls.
//!
//! Every function catches panics (a panic unwinding into C would abort the process):
//! a panic becomes `XB_ERR_IO` with its message. The descriptions are built once and
//! never freed (the lab never unloads a plugin).

use crate::abi::{
    self, CleanupFn, XB_CLOSED, XB_OK, XbChoice, XbError, XbHost, XbParam, XbPlugin, XbTransport,
    XbValue,
};
use crate::api::{Endpoint, Error, ErrorKind, Host, Listener, Recv, Transport};
use crate::params::Kind;
use crate::params::Values;
use std::ffi::{CStr, CString, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

/// A plugin's description, built once and kept for the life of the process.
#[derive(Debug)]
pub struct Described(*const XbPlugin);

// SAFETY: the description is immutable after it is built and lives forever (leaked);
// sharing its address between threads is sharing read-only data.
unsafe impl Send for Described {}
// SAFETY: as above: nothing writes through the pointer after construction.
unsafe impl Sync for Described {}

impl Described {
    /// The `xb_plugin` the entry symbol returns.
    pub fn as_ptr(&self) -> *const XbPlugin {
        self.0
    }
}

/// A string the C side can read forever: interior NULs are dropped.
fn leak_cstr(s: &str) -> *const c_char {
    let c = CString::new(s.replace('\0', "")).expect("NULs removed");
    Box::leak(c.into_boxed_c_str()).as_ptr()
}

fn leak_slice<T>(v: Vec<T>) -> (*const T, usize) {
    if v.is_empty() {
        return (std::ptr::null(), 0);
    }
    let s = Box::leak(v.into_boxed_slice());
    (s.as_ptr(), s.len())
}

/// Builds the `xb_plugin` of the `export!` macro.
pub fn describe(
    name: &str,
    version: &str,
    transports: Vec<XbTransport>,
    cleanup: Option<CleanupFn>,
) -> Described {
    let (transports, transport_count) = leak_slice(transports);
    let plugin = XbPlugin {
        abi_version: abi::XB_ABI_VERSION,
        name: leak_cstr(name),
        version: leak_cstr(version),
        transports,
        transport_count,
        cleanup,
    };
    Described(Box::leak(Box::new(plugin)))
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn param(p: &crate::params::Param) -> XbParam {
    let (kind, min, max, choices) = match p.kind {
        Kind::Integer { min, max } => (abi::XB_PARAM_INTEGER, min, max, Vec::new()),
        Kind::Bytes { min, max } => (abi::XB_PARAM_BYTES, to_i64(min), to_i64(max), Vec::new()),
        Kind::Duration { min, max } => (
            abi::XB_PARAM_DURATION,
            to_i64(min.as_nanos().min(u128::from(u64::MAX)) as u64),
            to_i64(max.as_nanos().min(u128::from(u64::MAX)) as u64),
            Vec::new(),
        ),
        Kind::Enum(cs) => (
            abi::XB_PARAM_ENUM,
            0,
            0,
            cs.iter()
                .map(|c| XbChoice {
                    name: leak_cstr(c.name),
                    help: leak_cstr(c.help),
                })
                .collect(),
        ),
        Kind::Bool => (abi::XB_PARAM_BOOL, 0, 0, Vec::new()),
    };
    let (choices, choice_count) = leak_slice(choices);
    XbParam {
        name: leak_cstr(p.name),
        kind,
        default_value: leak_cstr(p.default),
        help: leak_cstr(p.help),
        min,
        max,
        choices,
        choice_count,
    }
}

/// The `xb_transport` of `T`: its description and its monomorphised functions.
pub fn transport<T: Transport>() -> XbTransport {
    let (params, param_count) = leak_slice(T::params().iter().map(param).collect());
    let zero_copy = T::ZERO_COPY;
    XbTransport {
        name: leak_cstr(T::NAME),
        description: leak_cstr(T::DESCRIPTION),
        max_message: T::MAX_MESSAGE.map_or(0, |m| m as u64),
        flags: if zero_copy { abi::XB_ZERO_COPY } else { 0 },
        params,
        param_count,
        create: Some(create::<T>),
        destroy: Some(destroy::<T>),
        listen: Some(listen::<T>),
        accept: Some(accept::<T>),
        close_listener: Some(close_listener::<T>),
        connect: Some(connect::<T>),
        send: Some(send::<T>),
        flush: Some(flush::<T>),
        recv: Some(recv::<T>),
        close_send: Some(close_send::<T>),
        close: Some(close::<T>),
        loan: zero_copy.then_some(loan::<T> as abi::LoanFn),
        commit: zero_copy.then_some(commit::<T> as abi::CommitFn),
        borrow: zero_copy.then_some(borrow::<T> as abi::BorrowFn),
        release: zero_copy.then_some(release::<T> as abi::ReleaseFn),
        reach: if T::CROSSES_HOSTS {
            abi::XB_REACH_NETWORK
        } else {
            abi::XB_REACH_HOST
        },
    }
}

/// A clean-up function named in `export!`, as a type the generic C entry
/// below can be instantiated with.
pub trait CleanupHook {
    /// Removes what is left under `scope`.
    fn cleanup(scope: &str);
}

/// The C `cleanup` of a plugin: runs the hook on the scope, swallowing a panic (there
/// is no one to report it to but stderr, where the panic hook already wrote it).
///
/// # Safety
///
/// `scope` is null or a valid NUL-terminated string (the lab passes one).
pub unsafe extern "C" fn cleanup<H: CleanupHook>(scope: *const c_char) {
    // SAFETY: per this function's contract.
    let scope = unsafe { text(scope) };
    let _ = catch_unwind(AssertUnwindSafe(|| H::cleanup(&scope)));
}

/// A C string as Rust text (lossy; empty for null).
///
/// # Safety
///
/// `p` is null or points to a NUL-terminated string valid for the call.
unsafe fn text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: non-null and NUL-terminated per this function's contract.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

fn write_err(err: *mut XbError, message: &str) {
    if err.is_null() {
        return;
    }
    let mut n = message.len().min(abi::XB_ERROR_MAX - 1);
    while !message.is_char_boundary(n) {
        n -= 1;
    }
    // SAFETY: the lab passes a valid, writable xb_error to every call; n < its size,
    // so the message and its NUL fit.
    let out = unsafe { &mut (*err).message };
    for (dst, &src) in out.iter_mut().zip(&message.as_bytes()[..n]) {
        *dst = src as c_char;
    }
    out[n] = 0;
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_string())
}

/// Runs `f`, turning its error or panic into a status code and a message in `err`.
fn guard(err: *mut XbError, f: impl FnOnce() -> Result<i32, Error>) -> i32 {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(code)) => code,
        Ok(Err(e)) => {
            write_err(err, e.message());
            e.kind().code()
        }
        Err(p) => {
            write_err(err, &format!("the plugin panicked: {}", panic_text(&*p)));
            abi::XB_ERR_IO
        }
    }
}

fn timeout(ns: u64) -> Duration {
    Duration::from_nanos(ns)
}

/// The endpoint behind a handle.
///
/// # Safety
///
/// `ep` came from this plugin's `accept` or `connect` for `T` and is not closed; the
/// lab never uses one endpoint from two threads at once.
unsafe fn endpoint<'a, T: Transport>(ep: *mut c_void) -> &'a mut T::Endpoint {
    // SAFETY: per this function's contract, `ep` is a live Box<T::Endpoint> that no
    // one else is using.
    unsafe { &mut *ep.cast::<T::Endpoint>() }
}

unsafe extern "C" fn create<T: Transport>(
    values: *const XbValue,
    count: usize,
    host: *const XbHost,
    transport: *mut *mut c_void,
    max_message: *mut u64,
    err: *mut XbError,
) -> i32 {
    guard(err, || {
        let raw: &[XbValue] = if values.is_null() || count == 0 {
            &[]
        } else {
            // SAFETY: the lab passes `count` values valid for the call.
            unsafe { std::slice::from_raw_parts(values, count) }
        };
        let items = raw
            .iter()
            // SAFETY: every value's strings are valid NUL-terminated strings.
            .map(|v| unsafe { (text(v.name), text(v.text), v.number) })
            .collect();
        // SAFETY: the lab passes a valid host for the call.
        let host = unsafe { &*host };
        let host = Host {
            abi_version: host.abi_version,
            // SAFETY: the scope is a valid NUL-terminated string.
            scope: unsafe { text(host.scope) },
            listen_host: (host.abi_version >= 2 && !host.listen_host.is_null())
                // SAFETY: a revision-2 host's listen_host is null or a valid string.
                .then(|| unsafe { text(host.listen_host) }),
        };
        let t = T::create(&Values { items }, &host)?;
        let max = t.max_message().map_or(0, |m| m as u64);
        // SAFETY: the out-pointers are valid for writes during the call.
        unsafe {
            *max_message = max;
            *transport = Box::into_raw(Box::new(t)).cast();
        }
        Ok(XB_OK)
    })
}

unsafe extern "C" fn destroy<T: Transport>(transport: *mut c_void) {
    if !transport.is_null() {
        // SAFETY: made by `create::<T>` with Box::into_raw and destroyed once.
        let t = unsafe { Box::from_raw(transport.cast::<T>()) };
        let _ = catch_unwind(AssertUnwindSafe(|| drop(t)));
    }
}

unsafe extern "C" fn listen<T: Transport>(
    transport: *mut c_void,
    listener: *mut *mut c_void,
    address: *mut c_char,
    address_size: usize,
    err: *mut XbError,
) -> i32 {
    guard(err, || {
        // SAFETY: a live transport of `create::<T>`, shared only immutably.
        let t = unsafe { &*transport.cast::<T>() };
        let l = t.listen()?;
        let a = l.address();
        if a.len() + 1 > address_size || a.contains('\0') {
            return Err(Error::io(format!(
                "listen: the address {a:?} is longer than {} bytes",
                address_size.saturating_sub(1)
            )));
        }
        // SAFETY: `address` has room for `address_size` bytes, and a.len() + 1 fit.
        unsafe {
            std::ptr::copy_nonoverlapping(a.as_ptr().cast::<c_char>(), address, a.len());
            *address.add(a.len()) = 0;
            *listener = Box::into_raw(Box::new(l)).cast();
        }
        Ok(XB_OK)
    })
}

unsafe extern "C" fn accept<T: Transport>(
    listener: *mut c_void,
    timeout_ns: u64,
    endpoint: *mut *mut c_void,
    err: *mut XbError,
) -> i32 {
    guard(err, || {
        // SAFETY: a live listener of `listen::<T>`, used by one thread.
        let l = unsafe { &mut *listener.cast::<T::Listener>() };
        let ep = l.accept(timeout(timeout_ns))?;
        // SAFETY: the out-pointer is valid for writes during the call.
        unsafe { *endpoint = Box::into_raw(Box::new(ep)).cast() };
        Ok(XB_OK)
    })
}

unsafe extern "C" fn close_listener<T: Transport>(listener: *mut c_void) {
    if !listener.is_null() {
        // SAFETY: made by `listen::<T>` with Box::into_raw and closed once.
        let l = unsafe { Box::from_raw(listener.cast::<T::Listener>()) };
        let _ = catch_unwind(AssertUnwindSafe(|| drop(l)));
    }
}

unsafe extern "C" fn connect<T: Transport>(
    transport: *mut c_void,
    address: *const c_char,
    timeout_ns: u64,
    endpoint: *mut *mut c_void,
    err: *mut XbError,
) -> i32 {
    guard(err, || {
        // SAFETY: a live transport of `create::<T>`, shared only immutably.
        let t = unsafe { &*transport.cast::<T>() };
        // SAFETY: the address is a valid NUL-terminated string.
        let address = unsafe { CStr::from_ptr(address) };
        let address = address
            .to_str()
            .map_err(|_| Error::address("the address is not UTF-8"))?;
        let ep = t.connect(address, timeout(timeout_ns))?;
        // SAFETY: the out-pointer is valid for writes during the call.
        unsafe { *endpoint = Box::into_raw(Box::new(ep)).cast() };
        Ok(XB_OK)
    })
}

unsafe extern "C" fn send<T: Transport>(
    ep: *mut c_void,
    message: *const c_void,
    len: usize,
    timeout_ns: u64,
    err: *mut XbError,
) -> i32 {
    guard(err, || {
        // SAFETY: the lab passes `len` readable bytes at `message` (len >= 1).
        let msg = unsafe { std::slice::from_raw_parts(message.cast::<u8>(), len) };
        // SAFETY: a live endpoint of this transport (see `endpoint`).
        unsafe { endpoint::<T>(ep) }.send(msg, timeout(timeout_ns))?;
        Ok(XB_OK)
    })
}

unsafe extern "C" fn flush<T: Transport>(ep: *mut c_void, err: *mut XbError) -> i32 {
    guard(err, || {
        // SAFETY: a live endpoint of this transport (see `endpoint`).
        unsafe { endpoint::<T>(ep) }.flush()?;
        Ok(XB_OK)
    })
}

unsafe extern "C" fn recv<T: Transport>(
    ep: *mut c_void,
    buffer: *mut c_void,
    len: usize,
    timeout_ns: u64,
    err: *mut XbError,
) -> i32 {
    guard(err, || {
        // SAFETY: the lab passes `len` writable bytes at `buffer` (len >= 1).
        let buf = unsafe { std::slice::from_raw_parts_mut(buffer.cast::<u8>(), len) };
        // SAFETY: a live endpoint of this transport (see `endpoint`).
        match unsafe { endpoint::<T>(ep) }.recv(buf, timeout(timeout_ns))? {
            Recv::Message => Ok(XB_OK),
            Recv::Closed => Ok(XB_CLOSED),
        }
    })
}

unsafe extern "C" fn close_send<T: Transport>(ep: *mut c_void, err: *mut XbError) -> i32 {
    guard(err, || {
        // SAFETY: a live endpoint of this transport (see `endpoint`).
        unsafe { endpoint::<T>(ep) }.close_send()?;
        Ok(XB_OK)
    })
}

unsafe extern "C" fn close<T: Transport>(ep: *mut c_void) {
    if !ep.is_null() {
        // SAFETY: made by `accept::<T>`/`connect::<T>` with Box::into_raw, closed once.
        let ep = unsafe { Box::from_raw(ep.cast::<T::Endpoint>()) };
        let _ = catch_unwind(AssertUnwindSafe(|| drop(ep)));
    }
}

unsafe extern "C" fn loan<T: Transport>(
    ep: *mut c_void,
    len: usize,
    buffer: *mut *mut c_void,
    timeout_ns: u64,
    err: *mut XbError,
) -> i32 {
    guard(err, || {
        // SAFETY: a live endpoint of this transport (see `endpoint`).
        let b = unsafe { endpoint::<T>(ep) }.loan(len, timeout(timeout_ns))?;
        if b.len() < len {
            return Err(Error::io(format!(
                "loan: a buffer of {} bytes for a {len}-byte message",
                b.len()
            )));
        }
        // SAFETY: the out-pointer is valid for writes during the call. The buffer
        // stays the lab's to write until `commit` (the contract: no other call on
        // this endpoint in between).
        unsafe { *buffer = b.as_mut_ptr().cast() };
        Ok(XB_OK)
    })
}

unsafe extern "C" fn commit<T: Transport>(
    ep: *mut c_void,
    _buffer: *mut c_void,
    len: usize,
    err: *mut XbError,
) -> i32 {
    guard(err, || {
        // SAFETY: a live endpoint of this transport (see `endpoint`).
        unsafe { endpoint::<T>(ep) }.commit(len)?;
        Ok(XB_OK)
    })
}

unsafe extern "C" fn borrow<T: Transport>(
    ep: *mut c_void,
    len: usize,
    buffer: *mut *const c_void,
    timeout_ns: u64,
    err: *mut XbError,
) -> i32 {
    guard(err, || {
        // SAFETY: a live endpoint of this transport (see `endpoint`).
        match unsafe { endpoint::<T>(ep) }.borrow(len, timeout(timeout_ns))? {
            None => Ok(XB_CLOSED),
            Some(b) if b.len() != len => Err(Error::new(
                ErrorKind::MessageSize,
                format!("a {}-byte message where {len} bytes were expected", b.len()),
            )),
            Some(b) => {
                // SAFETY: the out-pointer is valid for writes during the call; the
                // bytes stay valid until `release` (no other call in between).
                unsafe { *buffer = b.as_ptr().cast() };
                Ok(XB_OK)
            }
        }
    })
}

unsafe extern "C" fn release<T: Transport>(
    ep: *mut c_void,
    _buffer: *const c_void,
    err: *mut XbError,
) -> i32 {
    guard(err, || {
        // SAFETY: a live endpoint of this transport (see `endpoint`).
        unsafe { endpoint::<T>(ep) }.release()?;
        Ok(XB_OK)
    })
}
