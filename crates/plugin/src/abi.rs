//! The C ABI of `include/xferbench/plugin.h`, type for type.
//!
//! The header is the contract and its documentation; these are its structures as
//! Rust sees them (`#[repr(C)]`, the same members in the same order), used by the
//! loader in `xferbench-transports` and by the export glue of this crate. A test
//! compiles the header and compares every size and offset with these.

use std::ffi::{c_char, c_void};

/// The header's revision within generation 1 (`XB_ABI_VERSION`).
pub const XB_ABI_VERSION: u32 = 2;
/// The entry symbol (`xferbench_plugin_v1`), NUL-terminated for `dlsym`.
pub const ENTRY_SYMBOL: &[u8] = b"xferbench_plugin_v1\0";

/// Success.
pub const XB_OK: i32 = 0;
/// `recv`, `borrow`: the peer closed its sending side.
pub const XB_CLOSED: i32 = 1;
/// Nothing happened within the timeout.
pub const XB_ERR_TIMEDOUT: i32 = -1;
/// The peer is gone.
pub const XB_ERR_PEER: i32 = -2;
/// The message is longer than the transport's largest.
pub const XB_ERR_TOO_LARGE: i32 = -3;
/// What arrived is not one message of the expected length.
pub const XB_ERR_MESSAGE_SIZE: i32 = -4;
/// An address this transport did not give out.
pub const XB_ERR_ADDRESS: i32 = -5;
/// Not offered (zero-copy calls of a copying transport).
pub const XB_ERR_UNSUPPORTED: i32 = -6;
/// A parameter value the plugin cannot use.
pub const XB_ERR_PARAM: i32 = -7;
/// Anything else.
pub const XB_ERR_IO: i32 = -8;

/// Largest error message, with its NUL.
pub const XB_ERROR_MAX: usize = 256;
/// Largest address, with its NUL.
pub const XB_ADDRESS_MAX: usize = 256;

/// `xb_param_kind::XB_PARAM_INTEGER`.
pub const XB_PARAM_INTEGER: u32 = 1;
/// `XB_PARAM_BYTES`.
pub const XB_PARAM_BYTES: u32 = 2;
/// `XB_PARAM_DURATION`.
pub const XB_PARAM_DURATION: u32 = 3;
/// `XB_PARAM_ENUM`.
pub const XB_PARAM_ENUM: u32 = 4;
/// `XB_PARAM_BOOL`.
pub const XB_PARAM_BOOL: u32 = 5;

/// `XB_ZERO_COPY`.
pub const XB_ZERO_COPY: u32 = 0x1;
/// `XB_REACH_HOST`: peers are processes of this host.
pub const XB_REACH_HOST: u32 = 0;
/// `XB_REACH_NETWORK`: addresses cross hosts (revision 2).
pub const XB_REACH_NETWORK: u32 = 1;

/// `xb_error`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct XbError {
    /// NUL-terminated message.
    pub message: [c_char; XB_ERROR_MAX],
}

impl Default for XbError {
    fn default() -> XbError {
        XbError {
            message: [0; XB_ERROR_MAX],
        }
    }
}

/// `xb_choice`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct XbChoice {
    /// Name.
    pub name: *const c_char,
    /// Help, or null.
    pub help: *const c_char,
}

/// `xb_param`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct XbParam {
    /// Name.
    pub name: *const c_char,
    /// An `XB_PARAM_*` kind.
    pub kind: u32,
    /// Default, as a user writes it.
    pub default_value: *const c_char,
    /// One line of help.
    pub help: *const c_char,
    /// Smallest accepted (both 0: no bound).
    pub min: i64,
    /// Largest accepted.
    pub max: i64,
    /// Enum choices.
    pub choices: *const XbChoice,
    /// How many.
    pub choice_count: usize,
}

/// `xb_value`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct XbValue {
    /// Parameter name.
    pub name: *const c_char,
    /// Value as shown.
    pub text: *const c_char,
    /// Value as a number.
    pub number: i64,
}

/// `xb_host`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct XbHost {
    /// The host's `XB_ABI_VERSION`.
    pub abi_version: u32,
    /// The clean-up scope.
    pub scope: *const c_char,
    /// Revision 2: this host's address on the route to peers on another host, or
    /// null when every peer runs on this host.
    pub listen_host: *const c_char,
}

/// `create`.
pub type CreateFn = unsafe extern "C" fn(
    values: *const XbValue,
    count: usize,
    host: *const XbHost,
    transport: *mut *mut c_void,
    max_message: *mut u64,
    err: *mut XbError,
) -> i32;
/// `destroy`, `close_listener`, `close`.
pub type FreeFn = unsafe extern "C" fn(object: *mut c_void);
/// `listen`.
pub type ListenFn = unsafe extern "C" fn(
    transport: *mut c_void,
    listener: *mut *mut c_void,
    address: *mut c_char,
    address_size: usize,
    err: *mut XbError,
) -> i32;
/// `accept`.
pub type AcceptFn = unsafe extern "C" fn(
    listener: *mut c_void,
    timeout_ns: u64,
    endpoint: *mut *mut c_void,
    err: *mut XbError,
) -> i32;
/// `connect`.
pub type ConnectFn = unsafe extern "C" fn(
    transport: *mut c_void,
    address: *const c_char,
    timeout_ns: u64,
    endpoint: *mut *mut c_void,
    err: *mut XbError,
) -> i32;
/// `send`.
pub type SendFn = unsafe extern "C" fn(
    endpoint: *mut c_void,
    message: *const c_void,
    len: usize,
    timeout_ns: u64,
    err: *mut XbError,
) -> i32;
/// `flush`, `close_send`.
pub type EndpointFn = unsafe extern "C" fn(endpoint: *mut c_void, err: *mut XbError) -> i32;
/// `recv`.
pub type RecvFn = unsafe extern "C" fn(
    endpoint: *mut c_void,
    buffer: *mut c_void,
    len: usize,
    timeout_ns: u64,
    err: *mut XbError,
) -> i32;
/// `loan`.
pub type LoanFn = unsafe extern "C" fn(
    endpoint: *mut c_void,
    len: usize,
    buffer: *mut *mut c_void,
    timeout_ns: u64,
    err: *mut XbError,
) -> i32;
/// `commit`.
pub type CommitFn = unsafe extern "C" fn(
    endpoint: *mut c_void,
    buffer: *mut c_void,
    len: usize,
    err: *mut XbError,
) -> i32;
/// `borrow`.
pub type BorrowFn = unsafe extern "C" fn(
    endpoint: *mut c_void,
    len: usize,
    buffer: *mut *const c_void,
    timeout_ns: u64,
    err: *mut XbError,
) -> i32;
/// `release`.
pub type ReleaseFn =
    unsafe extern "C" fn(endpoint: *mut c_void, buffer: *const c_void, err: *mut XbError) -> i32;
/// `cleanup`.
pub type CleanupFn = unsafe extern "C" fn(scope: *const c_char);
/// The entry symbol's type.
pub type EntryFn = unsafe extern "C" fn(host_abi_version: u32) -> *const XbPlugin;

/// `xb_transport`. Function pointers are `Option`s: a null one is `None` (the loader
/// refuses a plugin missing a required one).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct XbTransport {
    /// Name.
    pub name: *const c_char,
    /// One line.
    pub description: *const c_char,
    /// Largest message (0: none).
    pub max_message: u64,
    /// `XB_ZERO_COPY` or 0.
    pub flags: u32,
    /// Parameters.
    pub params: *const XbParam,
    /// How many.
    pub param_count: usize,
    /// `create`.
    pub create: Option<CreateFn>,
    /// `destroy`.
    pub destroy: Option<FreeFn>,
    /// `listen`.
    pub listen: Option<ListenFn>,
    /// `accept`.
    pub accept: Option<AcceptFn>,
    /// `close_listener`.
    pub close_listener: Option<FreeFn>,
    /// `connect`.
    pub connect: Option<ConnectFn>,
    /// `send`.
    pub send: Option<SendFn>,
    /// `flush` (optional).
    pub flush: Option<EndpointFn>,
    /// `recv`.
    pub recv: Option<RecvFn>,
    /// `close_send`.
    pub close_send: Option<EndpointFn>,
    /// `close`.
    pub close: Option<FreeFn>,
    /// `loan` (zero-copy).
    pub loan: Option<LoanFn>,
    /// `commit` (zero-copy).
    pub commit: Option<CommitFn>,
    /// `borrow` (zero-copy).
    pub borrow: Option<BorrowFn>,
    /// `release` (zero-copy).
    pub release: Option<ReleaseFn>,
    /// Revision 2: `XB_REACH_HOST` or `XB_REACH_NETWORK`.
    pub reach: u32,
}

/// `xb_plugin`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct XbPlugin {
    /// The revision the plugin was built with.
    pub abi_version: u32,
    /// Library name.
    pub name: *const c_char,
    /// Its own version.
    pub version: *const c_char,
    /// Its transports.
    pub transports: *const XbTransport,
    /// How many.
    pub transport_count: usize,
    /// Clean-up hook (optional).
    pub cleanup: Option<CleanupFn>,
}

/// The size of one `xb_transport` in revision `abi_version` (the stride of the
/// plugin's array); `None` for a revision this build does not know.
pub fn transport_size(abi_version: u32) -> Option<usize> {
    match abi_version {
        // Revision 1 ended with `release`, a pointer: `reach` starts where it ended.
        1 => Some(std::mem::offset_of!(XbTransport, reach)),
        2 => Some(std::mem::size_of::<XbTransport>()),
        _ => None,
    }
}

/// The size of one `xb_param` in revision `abi_version`.
pub fn param_size(abi_version: u32) -> Option<usize> {
    matches!(abi_version, 1 | 2).then_some(std::mem::size_of::<XbParam>())
}

/// Element `index` of a plugin's `xb_transport` array of revision `abi_version`, as
/// this revision's structure: the members the plugin's revision has are copied, the
/// later ones are zero (a revision-1 transport reads as `XB_REACH_HOST`).
///
/// # Safety
///
/// `array` points to at least `index + 1` elements of [`transport_size`]`(abi_version)`
/// bytes each, and `abi_version` is a revision this build knows.
pub unsafe fn read_transport(
    array: *const XbTransport,
    abi_version: u32,
    index: usize,
) -> XbTransport {
    let stride = transport_size(abi_version).expect("a known revision");
    let mut out = std::mem::MaybeUninit::<XbTransport>::zeroed();
    // SAFETY: the source holds `stride` readable bytes at element `index` (the
    // caller's contract), `stride` is at most the destination's size, and an
    // all-zero XbTransport is valid (null pointers, `None` functions, zero numbers).
    unsafe {
        std::ptr::copy_nonoverlapping(
            array.cast::<u8>().add(index * stride),
            out.as_mut_ptr().cast::<u8>(),
            stride,
        );
        out.assume_init()
    }
}
