//! The registry of transports the lab can drive, and static dispatch by name.
//!
//! [`dispatch`] turns a transport name into a call of a generic function with the
//! concrete transport type, so everything below it (the driver loops) is
//! monomorphised: one `match` per point, none per message.
//!
//! `rpmsg` is listed with the others but is not a [`Transport`]: a link serves all
//! of a point's channels and its remote echoes, so it runs on its own rig
//! ([`crate::rig::rpmsg`]), pingpong only. Its parameters are [`rpmsg_params`].
//!
//! Plugin transports (`plugin:/abs/path:NAME`, see [`crate::plugins`]) are listed
//! once probed; [`dispatch`] loads the plugin, which only the processes that run it
//! do (its measuring process and peers); [`validate`] checks their parameters
//! against the probed description without loading anything.

use crate::plugins;
use xferbench_transports::iox2::Iceoryx2;
use xferbench_transports::os::{Pipe, Tcp, Unix};
use xferbench_transports::param::check_known;
use xferbench_transports::plugin::{PluginError, PluginTransport};
use xferbench_transports::rpmsg::header::MAX_PAYLOAD;
use xferbench_transports::rpmsg::{Buffers, Notify};
use xferbench_transports::shm::Shm;
use xferbench_transports::{ParamError, ParamSpec, Params, Transport};

/// The RPMsg link's name in `--transport`.
pub const RPMSG: &str = "rpmsg";

/// Largest RPMsg packet: a 512-byte buffer less its 16-byte header.
pub const RPMSG_MAX_SIZE: u64 = MAX_PAYLOAD as u64;

static RPMSG_PARAMS: [ParamSpec; 2] = [
    ParamSpec {
        name: "notify",
        default: "kick",
        accepts: "kick, event-idx or poll",
        help: "how each side learns of new buffers: a kick per message, kicks suppressed by the event index, or polling",
    },
    ParamSpec {
        name: "buffers",
        default: "copy",
        accepts: "copy or zero-copy",
        help: "copy each packet into a vring buffer (rpmsg_send), or write it in place (rpmsg_get_tx_payload_buffer)",
    },
];

/// The RPMsg link's parameters: (notify, buffers).
pub fn rpmsg_params(params: &Params) -> Result<(Notify, Buffers), ParamError> {
    check_known(RPMSG, &RPMSG_PARAMS, params)?;
    let value = |i: usize| {
        params
            .get(RPMSG_PARAMS[i].name)
            .map_or(RPMSG_PARAMS[i].default, String::as_str)
    };
    let invalid = |i: usize| ParamError::Invalid {
        name: RPMSG_PARAMS[i].name.into(),
        value: value(i).into(),
        accepts: RPMSG_PARAMS[i].accepts.into(),
    };
    let notify = Notify::parse(value(0)).ok_or_else(|| invalid(0))?;
    let buffers = Buffers::ALL
        .into_iter()
        .find(|b| b.name() == value(1))
        .ok_or_else(|| invalid(1))?;
    Ok((notify, buffers))
}

/// The transports with a zero-copy mode (`--zero-copy`): the generic ones with
/// [`Transport::ZERO_COPY`], and `rpmsg`, whose rig writes and reads its buffers in
/// place.
pub const ZERO_COPY: [&str; 3] = [Shm::NAME, RPMSG, Iceoryx2::NAME];

/// Whether transport `name` has a zero-copy mode.
pub fn has_zero_copy(name: &str) -> bool {
    ZERO_COPY.contains(&name) || plugins::describe(name).is_some_and(|(_, _, zc)| zc)
}

/// Why zero-copy is refused on transport `name`.
pub fn no_zero_copy(name: &str) -> String {
    format!(
        "transport `{}` has no zero-copy mode (its messages are copied through the \
         kernel); zero-copy runs on {}",
        plugins::display_name(name),
        ZERO_COPY.join(", ")
    )
}

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

/// Every transport, in the order `list` shows them: the built-ins, then the plugin
/// transports probed so far (by their canonical name; see
/// [`plugins::display_name`]).
pub fn all() -> Vec<TransportInfo> {
    fn info<T: Transport>() -> TransportInfo {
        TransportInfo {
            name: T::NAME,
            description: T::DESCRIPTION,
            params: T::param_specs(),
        }
    }
    vec![
        info::<Shm>(),
        info::<Pipe>(),
        info::<Unix>(),
        info::<Tcp>(),
        info::<Iceoryx2>(),
        TransportInfo {
            name: RPMSG,
            description: "RPMsg link (virtio vrings in shared memory) to an echoing remote process; pingpong only, packets up to 496 bytes",
            params: &RPMSG_PARAMS,
        },
    ]
    .into_iter()
    .chain(plugins::infos().into_iter().map(|(name, description, params)| TransportInfo {
        name,
        description,
        params,
    }))
    .collect()
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
    /// The transport runs on a rig of its own (`rpmsg`), not through [`dispatch`].
    #[error("transport `{0}` is not a generic transport; it runs on its own rig")]
    OwnRig(String),
    /// A plugin transport could not be opened or created.
    #[error(transparent)]
    Plugin(#[from] PluginError),
}

impl TransportLookupError {
    /// Whether the user's input is at fault (exit 2) rather than the system.
    pub fn is_usage(&self) -> bool {
        match self {
            TransportLookupError::Plugin(e) => e.is_usage(),
            _ => true,
        }
    }
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
        "iceoryx2" => w.with(Iceoryx2::from_params(params)?),
        RPMSG => return Err(TransportLookupError::OwnRig(name.to_string())),
        _ if plugins::is_plugin(name) => w.with(PluginTransport::open(
            name,
            params,
            &plugins::host_from_env(),
        )?),
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
    if name == RPMSG {
        return rpmsg_params(params).map(|_| ()).map_err(Into::into);
    }
    if plugins::is_plugin(name) {
        // Checked against the probed description: this process never loads a plugin.
        return plugins::validate(name, params).map_err(Into::into);
    }
    dispatch(name, params, Nothing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_zero_copy_list_matches_the_transports() {
        struct ZeroCopy;
        impl WithTransport for ZeroCopy {
            type Output = bool;
            fn with<T: Transport + Clone>(self, _: T) -> bool {
                T::ZERO_COPY
            }
        }
        for t in all() {
            let has = match dispatch(t.name, &Params::new(), ZeroCopy) {
                Ok(has) => has,
                Err(TransportLookupError::OwnRig(_)) => true,
                Err(e) => panic!("{e}"),
            };
            assert_eq!(has, has_zero_copy(t.name), "{}", t.name);
        }
    }
}
