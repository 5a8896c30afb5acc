//! A user's shared library as a transport: the loader side of the C ABI in
//! `include/xferbench/plugin.h` (the header is the contract; read it first).
//!
//! [`PluginTransport`] is a [`Transport`] like the built-ins: the lab's measuring
//! loops are monomorphised over [`PluginEndpoint`], whose `send` and `recv` are one
//! indirect call into the plugin each, with no allocation, lock or extra system call
//! of ours. What differs is known at run time only: the name, the largest message and
//! the zero-copy mode come from the plugin ([`Transport::name`],
//! [`Transport::max_message`], [`Transport::zero_copy`]), and its parameters from its
//! description ([`PluginInfo`]).
//!
//! A transport is named `plugin:PATH[:NAME]` ([`PluginSpec`]); NAME picks one of the
//! library's transports and may be left out when it has one.
//!
//! Loading runs the library's code. The lab loads plugins only in processes that
//! exist to run them, so a plugin that crashes takes one of those down and the lab
//! reports it like a dead peer; this module does not know about processes.

pub mod describe;
pub mod in_flight;
mod load;

pub use describe::{ParamInfo, ParamKind, PluginInfo, TransportInfo, c_value};
pub use load::{Library, PluginLoadError, check_file, open as load_library, resolve, sha256_file};
pub use xferbench_plugin::abi;

use crate::Hosts;
use crate::{
    Endpoint, Listener, ParamDef, ParamError, ParamValues, Params, Recv, Transport, TransportError,
};
use abi::{XB_CLOSED, XB_OK, XbError, XbHost, XbValue};
use in_flight::Call;
use std::borrow::Cow;
use std::ffi::{CStr, CString, c_char, c_void};
use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The prefix of a plugin transport on the command line.
pub const PREFIX: &str = "plugin:";

/// `plugin:PATH[:NAME]`, taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginSpec {
    /// The file, as written.
    pub path: String,
    /// The transport, when named.
    pub name: Option<String>,
}

impl PluginSpec {
    /// Whether `word` names a plugin transport.
    pub fn is_plugin(word: &str) -> bool {
        word.starts_with(PREFIX)
    }

    /// Takes `plugin:PATH[:NAME]` apart: `None` unless it starts with `plugin:`. A
    /// path holding `:` is read whole when a file of that name exists.
    pub fn parse(word: &str) -> Option<PluginSpec> {
        let rest = word.strip_prefix(PREFIX)?;
        if let Some((path, name)) = rest.rsplit_once(':')
            && describe::is_transport_name(name)
            && !std::path::Path::new(rest).exists()
        {
            return Some(PluginSpec {
                path: path.to_string(),
                name: Some(name.to_string()),
            });
        }
        Some(PluginSpec {
            path: rest.to_string(),
            name: None,
        })
    }

    /// The canonical word for transport `name` of the plugin at absolute `path`.
    pub fn canonical(path: &std::path::Path, name: &str) -> String {
        format!("{PREFIX}{}:{name}", path.display())
    }
}

/// What the lab tells every plugin transport it creates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginHost {
    /// The clean-up scope (`xb_host::scope`): `[A-Za-z0-9_-]+`, at most 64 bytes.
    pub scope: String,
    /// The timeout of every send and receive: no progress for this long is a hung
    /// peer.
    pub io_timeout: Duration,
    /// This host's address on the route to peers on another host (`xb_host::
    /// listen_host`); `None` when every peer runs on this host.
    pub listen_host: Option<String>,
}

impl Default for PluginHost {
    fn default() -> PluginHost {
        PluginHost {
            scope: format!("xb{}", std::process::id()),
            io_timeout: Duration::from_secs(10),
            listen_host: None,
        }
    }
}

/// Why a plugin transport could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PluginError {
    /// The file is not a usable plugin.
    #[error(transparent)]
    Load(#[from] PluginLoadError),
    /// The library holds several transports and none was named.
    #[error("plugin {path}: it has several transports ({known}); name one with plugin:{path}:NAME")]
    Ambiguous {
        /// The path.
        path: String,
        /// Its transports.
        known: String,
    },
    /// A parameter was refused by its declaration.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// `create` failed.
    #[error("{transport}: create: {message}")]
    Create {
        /// Transport name.
        transport: String,
        /// Its status code.
        code: i32,
        /// The plugin's message.
        message: String,
    },
    /// The clean-up scope is not `[A-Za-z0-9_-]{1,64}`.
    #[error("invalid clean-up scope {0:?}")]
    Scope(String),
}

impl PluginError {
    /// Whether the user's input is at fault (a bad file, name or parameter value)
    /// rather than the system.
    pub fn is_usage(&self) -> bool {
        match self {
            PluginError::Create { code, .. } => *code == abi::XB_ERR_PARAM,
            PluginError::Scope(_) => false,
            _ => true,
        }
    }
}

/// Opens the plugin of `spec` and finds the transport it names (or its only one).
pub fn find(spec: &PluginSpec) -> Result<(Arc<Library>, usize), PluginError> {
    let lib = load::open(&spec.path)?;
    let known = || {
        lib.info
            .transports
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let index = match &spec.name {
        Some(name) => lib
            .info
            .transports
            .iter()
            .position(|t| &t.name == name)
            .ok_or_else(|| PluginLoadError::NoSuchTransport {
                path: spec.path.clone(),
                name: name.clone(),
                known: known(),
            })?,
        None if lib.info.transports.len() == 1 => 0,
        None => {
            return Err(PluginError::Ambiguous {
                path: spec.path.clone(),
                known: known(),
            });
        }
    };
    Ok((lib, index))
}

/// Runs a plugin's clean-up hook on `scope`, if it has one. Returns whether it had.
pub fn cleanup(lib: &Library, scope: &str) -> Result<bool, PluginError> {
    let Some(hook) = lib.cleanup else {
        return Ok(false);
    };
    let scope = checked_scope(scope)?;
    let _call = in_flight::enter(Call::Cleanup, 0);
    // SAFETY: the header's contract for `cleanup`: a NUL-terminated scope.
    unsafe { hook(scope.as_ptr()) };
    Ok(true)
}

fn checked_scope(scope: &str) -> Result<CString, PluginError> {
    let ok = !scope.is_empty()
        && scope.len() <= 64
        && scope
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !ok {
        return Err(PluginError::Scope(scope.to_string()));
    }
    Ok(CString::new(scope).expect("checked above"))
}

/// The `xb_value`s of `values` for a plugin transport: one `(name, text, number)` per
/// declared parameter, in declaration order, the default where none is set.
pub fn c_values(defs: &[ParamDef], values: &ParamValues) -> Vec<(String, String, i64)> {
    defs.iter()
        .map(|d| {
            let (text, number) = c_value(d, values.value(d));
            (d.name.to_string(), text, number)
        })
        .collect()
}

/// One created transport object of a plugin, shared by clones of its
/// [`PluginTransport`] and the listeners and endpoints made from it; destroyed when
/// the last of them is dropped.
struct Instance {
    library: Arc<Library>,
    index: usize,
    handle: *mut c_void,
    max_message: Option<usize>,
    zero_copy: bool,
    timeout_ns: u64,
}

// SAFETY: the header's thread contract: a transport object may be used from several
// threads at once (listen, connect), and destroy runs once, from the last owner.
unsafe impl Send for Instance {}
// SAFETY: as above.
unsafe impl Sync for Instance {}

impl Instance {
    fn table(&self) -> &abi::XbTransport {
        &self.library.tables[self.index]
    }

    fn name(&self) -> &'static str {
        self.library.static_names[self.index]
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Some(destroy) = self.table().destroy {
            let _call = in_flight::enter(Call::Destroy, 0);
            // SAFETY: made by this table's create, destroyed once, after every
            // listener and endpoint holding this instance was closed.
            unsafe { destroy(self.handle) };
        }
    }
}

/// A plugin's transport, configured: see the module doc.
#[derive(Clone)]
pub struct PluginTransport {
    inner: Arc<Instance>,
}

impl std::fmt::Debug for PluginTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginTransport")
            .field("name", &self.inner.name())
            .field("path", &self.inner.library.info.path)
            .finish()
    }
}

fn message_of(err: &mut XbError, fallback: &str) -> String {
    let bytes: Vec<u8> = err
        .message
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    err.message[0] = 0;
    if bytes.is_empty() {
        fallback.to_string()
    } else {
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

fn code_text(code: i32) -> &'static str {
    match code {
        abi::XB_ERR_TIMEDOUT => "timed out",
        abi::XB_ERR_PEER => "the peer is gone",
        abi::XB_ERR_TOO_LARGE => "message too large",
        abi::XB_ERR_MESSAGE_SIZE => "a message of another length",
        abi::XB_ERR_ADDRESS => "bad address",
        abi::XB_ERR_UNSUPPORTED => "not supported",
        abi::XB_ERR_PARAM => "bad parameter",
        abi::XB_ERR_IO => "failed",
        _ => "an unknown status",
    }
}

fn io_kind(code: i32) -> io::ErrorKind {
    match code {
        abi::XB_ERR_TIMEDOUT => io::ErrorKind::TimedOut,
        abi::XB_ERR_PEER => io::ErrorKind::ConnectionReset,
        abi::XB_ERR_TOO_LARGE | abi::XB_ERR_ADDRESS | abi::XB_ERR_PARAM => {
            io::ErrorKind::InvalidInput
        }
        abi::XB_ERR_MESSAGE_SIZE => io::ErrorKind::UnexpectedEof,
        abi::XB_ERR_UNSUPPORTED => io::ErrorKind::Unsupported,
        _ => io::ErrorKind::Other,
    }
}

impl PluginTransport {
    /// Opens the plugin of `word` (`plugin:PATH[:NAME]`) and creates its transport
    /// with `params` as text.
    pub fn open(word: &str, params: &Params, host: &PluginHost) -> Result<Self, PluginError> {
        let (library, index) = Self::find_word(word)?;
        let t = &library.info.transports[index];
        let values = ParamValues::parse(&t.name, &t.defs(), params)?;
        Self::create(library, index, &values, host)
    }

    /// Opens the plugin of `word` and creates its transport with checked `values`.
    pub fn open_values(
        word: &str,
        values: &ParamValues,
        host: &PluginHost,
    ) -> Result<Self, PluginError> {
        let (library, index) = Self::find_word(word)?;
        Self::create(library, index, values, host)
    }

    fn find_word(word: &str) -> Result<(Arc<Library>, usize), PluginError> {
        let spec = PluginSpec::parse(word).ok_or_else(|| PluginLoadError::NotFound {
            path: word.to_string(),
        })?;
        find(&spec)
    }

    /// Creates transport `index` of an opened library with `values`.
    pub fn create(
        library: Arc<Library>,
        index: usize,
        values: &ParamValues,
        host: &PluginHost,
    ) -> Result<Self, PluginError> {
        let info = &library.info.transports[index];
        let defs = info.defs();
        values.check(&info.name, &defs)?;
        let parsed = c_values(&defs, values);
        let scope = checked_scope(&host.scope)?;
        let cstr = |s: &str| CString::new(s.replace('\0', "")).expect("NULs removed");
        let owned: Vec<(CString, CString, i64)> = parsed
            .iter()
            .map(|(n, t, v)| (cstr(n), cstr(t), *v))
            .collect();
        let raw: Vec<XbValue> = owned
            .iter()
            .map(|(n, t, v)| XbValue {
                name: n.as_ptr(),
                text: t.as_ptr(),
                number: *v,
            })
            .collect();
        let listen_host = host.listen_host.as_deref().map(cstr);
        let xb_host = XbHost {
            abi_version: abi::XB_ABI_VERSION,
            scope: scope.as_ptr(),
            listen_host: listen_host
                .as_ref()
                .map_or(std::ptr::null(), |h| h.as_ptr()),
        };
        let table = &library.tables[index];
        let create = table.create.expect("checked when loaded");
        let mut handle: *mut c_void = std::ptr::null_mut();
        let mut max = info.max_message.unwrap_or(0);
        let mut err = XbError::default();
        in_flight::install();
        let call = in_flight::enter(Call::Create, 0);
        // SAFETY: the header's create contract: `raw` holds one valid value per
        // declared parameter, the host and out-pointers are valid for the call.
        let rc = unsafe {
            create(
                raw.as_ptr(),
                raw.len(),
                &xb_host,
                &mut handle,
                &mut max,
                &mut err,
            )
        };
        drop(call);
        if rc != XB_OK || handle.is_null() {
            let code = if rc == XB_OK { abi::XB_ERR_IO } else { rc };
            return Err(PluginError::Create {
                transport: info.name.clone(),
                code,
                message: message_of(
                    &mut err,
                    if rc == XB_OK {
                        "it returned XB_OK but no transport object"
                    } else {
                        code_text(code)
                    },
                ),
            });
        }
        let timeout_ns = u64::try_from(host.io_timeout.as_nanos()).unwrap_or(u64::MAX);
        Ok(PluginTransport {
            inner: Arc::new(Instance {
                max_message: usize::try_from(max).ok().filter(|&m| m != 0),
                zero_copy: info.zero_copy,
                library,
                index,
                handle,
                timeout_ns,
            }),
        })
    }

    /// The library's description.
    pub fn info(&self) -> &PluginInfo {
        &self.inner.library.info
    }

    /// The library.
    pub fn library(&self) -> &Arc<Library> {
        &self.inner.library
    }

    fn io_error(&self, op: &str, code: i32, err: &mut XbError) -> TransportError {
        let name = self.inner.name();
        let message = message_of(err, code_text(code));
        if code == abi::XB_ERR_TIMEDOUT && op == "accept" {
            return TransportError::Timeout {
                transport: name,
                what: "connect",
            };
        }
        if code == abi::XB_ERR_TIMEDOUT && op == "connect" {
            return TransportError::Timeout {
                transport: name,
                what: "accept",
            };
        }
        TransportError::Io {
            transport: name,
            op: match op {
                "listen" => "listen",
                "accept" => "accept",
                _ => "connect",
            },
            source: io::Error::new(io_kind(code), message),
        }
    }

    fn endpoint(&self, handle: *mut c_void) -> PluginEndpoint {
        let t = self.inner.table();
        PluginEndpoint {
            handle,
            send: t.send.expect("checked when loaded"),
            recv: t.recv.expect("checked when loaded"),
            flush: t.flush,
            close_send: t.close_send.expect("checked when loaded"),
            close: t.close.expect("checked when loaded"),
            loan: t.loan,
            commit: t.commit,
            borrow: t.borrow,
            release: t.release,
            zero_copy: self.inner.zero_copy,
            timeout_ns: self.inner.timeout_ns,
            err: Box::default(),
            sent: 0,
            received: 0,
            instance: self.inner.clone(),
        }
    }
}

fn ns_until(deadline: Instant) -> u64 {
    u64::try_from(
        deadline
            .saturating_duration_since(Instant::now())
            .as_nanos(),
    )
    .unwrap_or(u64::MAX)
}

impl Transport for PluginTransport {
    type Endpoint = PluginEndpoint;
    const HOSTS: Hosts = Hosts::One(Cow::Borrowed("is a plugin's transport"));
    type Listener = PluginListener;
    const NAME: &'static str = "plugin";
    const DESCRIPTION: &'static str = "a transport of a user's shared library (plugin:PATH[:NAME])";

    fn params() -> &'static [ParamDef] {
        // Known per plugin only: see `TransportInfo::defs`.
        &[]
    }

    fn from_values(_values: &ParamValues) -> Result<Self, ParamError> {
        Err(ParamError::Unknown {
            name: "plugin".into(),
            owner: "plugin".into(),
            known: "a plugin transport is opened with PluginTransport::open".into(),
        })
    }

    fn name(&self) -> &str {
        self.inner.name()
    }

    fn max_message(&self) -> Option<usize> {
        self.inner.max_message
    }

    fn zero_copy(&self) -> bool {
        self.inner.zero_copy
    }

    fn listen(&self) -> Result<PluginListener, TransportError> {
        let t = self.inner.table();
        let listen = t.listen.expect("checked when loaded");
        let mut handle: *mut c_void = std::ptr::null_mut();
        let mut address = [0 as c_char; abi::XB_ADDRESS_MAX];
        let mut err = XbError::default();
        let call = in_flight::enter(Call::Listen, 0);
        // SAFETY: the header's listen contract; the address buffer has
        // XB_ADDRESS_MAX bytes.
        let rc = unsafe {
            listen(
                self.inner.handle,
                &mut handle,
                address.as_mut_ptr(),
                address.len(),
                &mut err,
            )
        };
        drop(call);
        if rc != XB_OK || handle.is_null() {
            return Err(self.io_error(
                "listen",
                if rc == XB_OK { abi::XB_ERR_IO } else { rc },
                &mut err,
            ));
        }
        let mut listener = PluginListener {
            handle,
            address: String::new(),
            transport: self.clone(),
        };
        // The plugin must NUL-terminate within the buffer; refuse it otherwise.
        let Some(end) = address.iter().position(|&c| c == 0) else {
            return Err(TransportError::Io {
                transport: self.inner.name(),
                op: "listen",
                source: io::Error::other("the address is not NUL-terminated"),
            });
        };
        // SAFETY: NUL-terminated within the buffer (checked above).
        let text = unsafe { CStr::from_ptr(address[..=end].as_ptr()) }
            .to_string_lossy()
            .into_owned();
        listener.address = text;
        Ok(listener)
    }

    fn connect(&self, address: &str, deadline: Instant) -> Result<PluginEndpoint, TransportError> {
        let connect = self.inner.table().connect.expect("checked when loaded");
        let Ok(c_address) = CString::new(address) else {
            return Err(TransportError::BadAddress {
                transport: self.inner.name(),
                address: address.to_string(),
                reason: "it holds a NUL byte",
            });
        };
        let mut handle: *mut c_void = std::ptr::null_mut();
        let mut err = XbError::default();
        let call = in_flight::enter(Call::Connect, 0);
        // SAFETY: the header's connect contract.
        let rc = unsafe {
            connect(
                self.inner.handle,
                c_address.as_ptr(),
                ns_until(deadline),
                &mut handle,
                &mut err,
            )
        };
        drop(call);
        if rc != XB_OK || handle.is_null() {
            return Err(self.io_error(
                "connect",
                if rc == XB_OK { abi::XB_ERR_IO } else { rc },
                &mut err,
            ));
        }
        Ok(self.endpoint(handle))
    }
}

/// A plugin listener; closed when dropped.
pub struct PluginListener {
    handle: *mut c_void,
    address: String,
    transport: PluginTransport,
}

// SAFETY: the header: a listener is used by one thread (it may move between them).
unsafe impl Send for PluginListener {}

impl Drop for PluginListener {
    fn drop(&mut self) {
        let close = self
            .transport
            .inner
            .table()
            .close_listener
            .expect("checked when loaded");
        let _call = in_flight::enter(Call::CloseListener, 0);
        // SAFETY: made by listen, closed once.
        unsafe { close(self.handle) };
    }
}

impl Listener for PluginListener {
    type Endpoint = PluginEndpoint;

    fn address(&self) -> &str {
        &self.address
    }

    fn accept(self, deadline: Instant) -> Result<PluginEndpoint, TransportError> {
        let accept = self
            .transport
            .inner
            .table()
            .accept
            .expect("checked when loaded");
        let mut handle: *mut c_void = std::ptr::null_mut();
        let mut err = XbError::default();
        let call = in_flight::enter(Call::Accept, 0);
        // SAFETY: the header's accept contract, called once per listener.
        let rc = unsafe { accept(self.handle, ns_until(deadline), &mut handle, &mut err) };
        drop(call);
        if rc != XB_OK || handle.is_null() {
            return Err(self.transport.io_error(
                "accept",
                if rc == XB_OK { abi::XB_ERR_IO } else { rc },
                &mut err,
            ));
        }
        Ok(self.transport.endpoint(handle))
        // `self` drops here: close_listener, as the header promises after accept.
    }
}

/// The likely cause when a plugin's 1-byte message reads as the end of the stream:
/// `XB_CLOSED` is 1, the number of bytes a `recv` written like `read()` returns.
pub const CLOSED_IS_ONE: &str = "a plugin whose recv returns the number of bytes it read \
     (as read() does) returns 1, which is XB_CLOSED, for a 1-byte message: return XB_OK for a message";

/// One end of a plugin channel. The hot calls are one indirect call each into the
/// plugin, with the function pointers held here (no lookup per message).
pub struct PluginEndpoint {
    handle: *mut c_void,
    send: abi::SendFn,
    recv: abi::RecvFn,
    flush: Option<abi::EndpointFn>,
    close_send: abi::EndpointFn,
    close: abi::FreeFn,
    loan: Option<abi::LoanFn>,
    commit: Option<abi::CommitFn>,
    borrow: Option<abi::BorrowFn>,
    release: Option<abi::ReleaseFn>,
    zero_copy: bool,
    timeout_ns: u64,
    err: Box<XbError>,
    /// Messages sent (send or commit) and received (recv or release) so far, to
    /// name the one a call in flight carries.
    sent: u64,
    received: u64,
    /// Keeps the transport object alive until this endpoint is closed.
    instance: Arc<Instance>,
}

// SAFETY: the header: an endpoint is used by one thread at a time and may move
// between threads between calls; `&mut self` on every call guarantees the former.
unsafe impl Send for PluginEndpoint {}

impl Drop for PluginEndpoint {
    fn drop(&mut self) {
        let _call = in_flight::enter(Call::Close, 0);
        // SAFETY: made by accept/connect, closed once; the instance outlives it.
        unsafe { (self.close)(self.handle) };
    }
}

impl PluginEndpoint {
    #[cold]
    fn error(&mut self, op: &str, code: i32) -> io::Error {
        let name = self.instance.name();
        let message = message_of(&mut self.err, code_text(code));
        let text = if code == abi::XB_ERR_TIMEDOUT {
            format!(
                "{name}: {op}: {message} (nothing moved for {:.1} s: the peer or the transport hung; raise --timeout if this is expected)",
                self.timeout_ns as f64 / 1e9
            )
        } else if !(abi::XB_ERR_IO..=XB_CLOSED).contains(&code) {
            format!("{name}: {op}: returned the unknown status {code}: {message}")
        } else {
            format!("{name}: {op}: {message}")
        };
        io::Error::new(io_kind(code), text)
    }

    fn zero_copy_fns(
        &self,
    ) -> io::Result<(abi::LoanFn, abi::CommitFn, abi::BorrowFn, abi::ReleaseFn)> {
        match (
            self.zero_copy,
            self.loan,
            self.commit,
            self.borrow,
            self.release,
        ) {
            (true, Some(l), Some(c), Some(b), Some(r)) => Ok((l, c, b, r)),
            _ => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "{}: this transport has no zero-copy mode",
                    self.instance.name()
                ),
            )),
        }
    }

    fn borrowed(&mut self, len: usize) -> io::Result<Option<*const u8>> {
        let (_, _, borrow, _) = self.zero_copy_fns()?;
        let mut buf: *const c_void = std::ptr::null();
        let call = in_flight::enter(Call::Borrow, self.received + 1);
        // SAFETY: the header's borrow contract.
        let rc = unsafe { borrow(self.handle, len, &mut buf, self.timeout_ns, &mut *self.err) };
        drop(call);
        match rc {
            XB_OK if !buf.is_null() => Ok(Some(buf.cast())),
            XB_OK => Err(io::Error::other(format!(
                "{}: borrow: returned XB_OK but no buffer",
                self.instance.name()
            ))),
            XB_CLOSED => Ok(None),
            code => Err(self.error("borrow", code)),
        }
    }

    fn loaned(&mut self, len: usize) -> io::Result<*mut u8> {
        let (loan, _, _, _) = self.zero_copy_fns()?;
        let mut buf: *mut c_void = std::ptr::null_mut();
        let call = in_flight::enter(Call::Loan, self.sent + 1);
        // SAFETY: the header's loan contract.
        let rc = unsafe { loan(self.handle, len, &mut buf, self.timeout_ns, &mut *self.err) };
        drop(call);
        match rc {
            XB_OK if !buf.is_null() => Ok(buf.cast()),
            XB_OK => Err(io::Error::other(format!(
                "{}: loan: returned XB_OK but no buffer",
                self.instance.name()
            ))),
            code => Err(self.error("loan", code)),
        }
    }

    fn committed(&mut self, buf: *mut u8, len: usize) -> io::Result<()> {
        let (_, commit, _, _) = self.zero_copy_fns()?;
        let call = in_flight::enter(Call::Commit, self.sent + 1);
        // SAFETY: the header's commit contract, for the buffer loan returned.
        let rc = unsafe { commit(self.handle, buf.cast(), len, &mut *self.err) };
        drop(call);
        match rc {
            XB_OK => {
                self.sent += 1;
                Ok(())
            }
            code => Err(self.error("commit", code)),
        }
    }

    fn released(&mut self, buf: *const u8) -> io::Result<()> {
        let (_, _, _, release) = self.zero_copy_fns()?;
        let call = in_flight::enter(Call::Release, self.received + 1);
        // SAFETY: the header's release contract, for the buffer borrow returned.
        let rc = unsafe { release(self.handle, buf.cast(), &mut *self.err) };
        drop(call);
        match rc {
            XB_OK => {
                self.received += 1;
                Ok(())
            }
            code => Err(self.error("release", code)),
        }
    }
}

fn empty_message() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "a plugin carries messages of at least 1 byte",
    )
}

impl Endpoint for PluginEndpoint {
    #[inline]
    fn send(&mut self, msg: &[u8]) -> io::Result<()> {
        if msg.is_empty() {
            return Err(empty_message());
        }
        let call = in_flight::enter(Call::Send, self.sent + 1);
        // SAFETY: the header's send contract: `msg` is readable for its length.
        let rc = unsafe {
            (self.send)(
                self.handle,
                msg.as_ptr().cast(),
                msg.len(),
                self.timeout_ns,
                &mut *self.err,
            )
        };
        drop(call);
        if rc == XB_OK {
            self.sent += 1;
            Ok(())
        } else {
            Err(self.error("send", rc))
        }
    }

    #[inline]
    fn flush(&mut self) -> io::Result<()> {
        let Some(flush) = self.flush else {
            return Ok(());
        };
        let call = in_flight::enter(Call::Flush, 0);
        // SAFETY: the header's flush contract.
        let rc = unsafe { flush(self.handle, &mut *self.err) };
        drop(call);
        match rc {
            XB_OK => Ok(()),
            code => Err(self.error("flush", code)),
        }
    }

    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> io::Result<Recv> {
        if buf.is_empty() {
            return Err(empty_message());
        }
        let call = in_flight::enter(Call::Recv, self.received + 1);
        // SAFETY: the header's recv contract: `buf` is writable for its length.
        let rc = unsafe {
            (self.recv)(
                self.handle,
                buf.as_mut_ptr().cast(),
                buf.len(),
                self.timeout_ns,
                &mut *self.err,
            )
        };
        drop(call);
        match rc {
            XB_OK => {
                self.received += 1;
                Ok(Recv::Message)
            }
            XB_CLOSED => Ok(Recv::Closed),
            code if code > XB_CLOSED && code as usize == buf.len() => {
                let e = self.error("recv", code);
                Err(io::Error::new(
                    e.kind(),
                    format!(
                        "{e} (the message's length: a recv returns XB_OK for a message, not the number of bytes it read)"
                    ),
                ))
            }
            code => Err(self.error("recv", code)),
        }
    }

    fn close_send(&mut self) -> io::Result<()> {
        let call = in_flight::enter(Call::CloseSend, 0);
        // SAFETY: the header's close_send contract.
        let rc = unsafe { (self.close_send)(self.handle, &mut *self.err) };
        drop(call);
        match rc {
            XB_OK => Ok(()),
            code => Err(self.error("close_send", code)),
        }
    }

    #[inline]
    fn send_in_place<F: FnOnce(&mut [u8])>(&mut self, len: usize, fill: F) -> io::Result<()> {
        if len == 0 {
            return Err(empty_message());
        }
        let buf = self.loaned(len)?;
        // SAFETY: loan lent `len` writable bytes, ours until commit.
        fill(unsafe { std::slice::from_raw_parts_mut(buf, len) });
        self.committed(buf, len)
    }

    #[inline]
    fn recv_in_place<R, F: FnOnce(&[u8]) -> R>(
        &mut self,
        len: usize,
        read: F,
    ) -> io::Result<Option<R>> {
        if len == 0 {
            return Err(empty_message());
        }
        let Some(buf) = self.borrowed(len)? else {
            return Ok(None);
        };
        // SAFETY: borrow lent `len` readable bytes until release.
        let r = read(unsafe { std::slice::from_raw_parts(buf, len) });
        self.released(buf)?;
        Ok(Some(r))
    }

    #[inline]
    fn echo_in_place<R, F: FnOnce(&[u8], &mut [u8]) -> R>(
        &mut self,
        len: usize,
        f: F,
    ) -> io::Result<Option<R>> {
        if len == 0 {
            return Err(empty_message());
        }
        let Some(req) = self.borrowed(len)? else {
            return Ok(None);
        };
        let rep = self.loaned(len)?;
        // SAFETY: the borrowed request and the loaned reply are both valid for `len`
        // bytes until release and commit, and are distinct buffers (one received,
        // one to send).
        let r = unsafe {
            f(
                std::slice::from_raw_parts(req, len),
                std::slice::from_raw_parts_mut(rep, len),
            )
        };
        self.committed(rep, len)?;
        self.released(req)?;
        Ok(Some(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_take_a_path_and_an_optional_name() {
        assert_eq!(
            PluginSpec::parse("plugin:./libx.so"),
            Some(PluginSpec {
                path: "./libx.so".into(),
                name: None
            })
        );
        assert_eq!(
            PluginSpec::parse("plugin:./libx.so:posix-mq"),
            Some(PluginSpec {
                path: "./libx.so".into(),
                name: Some("posix-mq".into())
            })
        );
        assert_eq!(PluginSpec::parse("shm"), None);
        assert!(PluginSpec::is_plugin("plugin:x"));
    }

    #[test]
    fn bad_files_are_named_with_their_problem() {
        let e = PluginTransport::open(
            "plugin:/no/such/libxb.so",
            &Params::new(),
            &PluginHost::default(),
        )
        .unwrap_err();
        assert!(e.is_usage());
        assert_eq!(e.to_string(), "plugin /no/such/libxb.so: no such file");
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let text = dir.join("notes.txt");
        std::fs::write(&text, "hello, this is not a library\n").unwrap();
        let e = PluginTransport::open(
            &format!("plugin:{}", text.display()),
            &Params::new(),
            &PluginHost::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("notes.txt") && e.contains("not an ELF file"),
            "{e}"
        );
        let e = PluginTransport::open(
            &format!("plugin:{}", dir.display()),
            &Params::new(),
            &PluginHost::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("is a directory"), "{e}");
    }
}
