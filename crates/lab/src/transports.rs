//! The registry of transports the lab can drive, and static dispatch by name.
//!
//! [`dispatch`] turns a transport name into a call of a generic function with the
//! concrete transport type, so everything below it (the driver loops) is
//! monomorphised: one `match` per point, none per message.

use xferbench_transports::os::{Pipe, Tcp, Unix};
use xferbench_transports::shm::Shm;
use xferbench_transports::{ParamError, ParamSpec, Params, Transport};

/// What `xferbench list` shows of a transport.
#[derive(Debug, Clone, Copy)]
pub struct TransportInfo {
    /// Command-line name.
    pub name: &'static str,
    /// One line of description.
    pub description: &'static str,
    /// Its parameters.
    pub params: &'static [ParamSpec],
}

/// Every transport, in the order `list` shows them.
pub fn all() -> Vec<TransportInfo> {
    fn info<T: Transport>() -> TransportInfo {
        TransportInfo {
            name: T::NAME,
            description: T::DESCRIPTION,
            params: T::param_specs(),
        }
    }
    vec![info::<Shm>(), info::<Pipe>(), info::<Unix>(), info::<Tcp>()]
}

/// A transport's parameters by name (empty for unknown names).
pub fn params_of(name: &str) -> &'static [ParamSpec] {
    all()
        .into_iter()
        .find(|t| t.name == name)
        .map_or(&[], |t| t.params)
}

/// A computation generic over the transport type.
pub trait WithTransport {
    /// Result of the computation.
    type Output;
    /// Runs the computation with a configured transport.
    fn with<T: Transport + Clone>(self, transport: T) -> Self::Output;
}

/// Why a transport could not be set up from its name and parameters.
#[derive(Debug, thiserror::Error)]
pub enum TransportLookupError {
    /// No transport has that name.
    #[error("unknown transport `{name}`; choose from: {known}")]
    Unknown {
        /// The name given.
        name: String,
        /// The known names.
        known: String,
    },
    /// A parameter was refused.
    #[error(transparent)]
    Param(#[from] ParamError),
}

/// Builds the named transport from `params` and runs `w` with it.
pub fn dispatch<W: WithTransport>(
    name: &str,
    params: &Params,
    w: W,
) -> Result<W::Output, TransportLookupError> {
    Ok(match name {
        "shm" => w.with(Shm::from_params(params)?),
        "pipe" => w.with(Pipe::from_params(params)?),
        "unix" => w.with(Unix::from_params(params)?),
        "tcp" => w.with(Tcp::from_params(params)?),
        _ => {
            return Err(TransportLookupError::Unknown {
                name: name.to_string(),
                known: all().iter().map(|t| t.name).collect::<Vec<_>>().join(", "),
            });
        }
    })
}

/// Checks a transport name and parameters without running anything.
pub fn validate(name: &str, params: &Params) -> Result<(), TransportLookupError> {
    struct Nothing;
    impl WithTransport for Nothing {
        type Output = ();
        fn with<T: Transport + Clone>(self, _: T) {}
    }
    dispatch(name, params, Nothing)
}
