//! The registry of transports the lab can drive, and static dispatch by name.
//!
//! [`all`] lists every transport's [`Descriptor`] (name, description, parameter
//! definitions, whether it has a zero-copy mode): `list`, validation and sweeps read
//! them, so a transport's parameters and modes are answered in one place.
//! [`dispatch`] turns a transport name into a call of a generic function with the
//! concrete transport type, so everything below it (the driver loops) is
//! monomorphised: one `match` per point, none per message.
//!
//! `rpmsg` is listed with the others but is not dispatched: a link serves all of a
//! point's channels and its remote echoes, so it runs on its own rig
//! (`rig::rpmsg`), pingpong only; [`rpmsg_settings`] reads its parameters.
//!
//! Plugin transports (`plugin:/abs/path:NAME`, see [`crate::plugins`]) are listed
//! once probed, with the descriptor built from their description; [`dispatch`]
//! loads the plugin, which only the processes that run it do (its measuring process
//! and peers); [`validate`] checks their parameters against the probed description
//! without loading anything.

use crate::error::TransportLookupError;
use crate::plugins;
use std::borrow::Cow;
#[cfg(feature = "iceoryx2")]
use xferbench_transports::iox2::Iceoryx2;
use xferbench_transports::os::{Pipe, Tcp, Unix};
use xferbench_transports::plugin::PluginTransport;
use xferbench_transports::rpmsg::header::MAX_PAYLOAD;
use xferbench_transports::rpmsg::{BUFFERS, Buffers, NOTIFY, Notify};
use xferbench_transports::shm::Shm;
use xferbench_transports::{Descriptor, ParamDef, ParamValues, Params, Transport};

/// The RPMsg link's name in `--transport`.
pub const RPMSG: &str = "rpmsg";

/// Largest RPMsg packet: a 512-byte buffer less its 16-byte header.
pub const RPMSG_MAX_SIZE: u64 = MAX_PAYLOAD as u64;

static RPMSG_PARAMS: [ParamDef; 2] = [NOTIFY, BUFFERS];

fn rpmsg() -> Descriptor {
    Descriptor {
        name: Cow::Borrowed(RPMSG),
        description: Cow::Borrowed(
            "RPMsg link (virtio vrings in shared memory) to an echoing remote process; pingpong only, packets up to 496 bytes",
        ),
        params: Cow::Borrowed(&RPMSG_PARAMS),
        // Its rig writes tx buffers and reads replies in place.
        zero_copy: true,
        max_message: Some(MAX_PAYLOAD),
        wakeup: xferbench_transports::rpmsg::WAKEUP,
        hosts: xferbench_transports::rpmsg::HOSTS,
    }
}

/// Every transport, in the order `list` shows them: the built-ins, then the plugin
/// transports probed so far (named `plugin:/abs/path:NAME`; see
/// [`plugins::display_name`]).
pub fn all() -> Vec<Descriptor> {
    let mut all = vec![
        Shm::descriptor(),
        Pipe::descriptor(),
        Unix::descriptor(),
        Tcp::descriptor(),
        #[cfg(feature = "iceoryx2")]
        Iceoryx2::descriptor(),
        rpmsg(),
    ];
    all.extend(plugins::descriptors());
    all
}

/// The transport called `name`.
pub fn descriptor(name: &str) -> Result<Descriptor, TransportLookupError> {
    if plugins::is_plugin(name) {
        plugins::ensure_registered(name);
    }
    all()
        .into_iter()
        .find(|t| t.name == name)
        .ok_or_else(|| TransportLookupError::unknown(name))
}

fn names<'a>(ts: impl Iterator<Item = &'a Descriptor>) -> String {
    ts.map(|t| &*t.name).collect::<Vec<_>>().join(", ")
}

/// Reads parameters as text (a peer's hello, a command line) against the
/// definitions of transport `name`.
pub fn resolve(name: &str, params: &Params) -> Result<ParamValues, TransportLookupError> {
    Ok(descriptor(name)?.values(params)?)
}

/// Whether transport `name` has a zero-copy mode (its descriptor says).
pub fn has_zero_copy(name: &str) -> bool {
    descriptor(name).is_ok_and(|d| d.zero_copy)
}

/// Why zero-copy is refused on transport `name`.
pub fn no_zero_copy(name: &str) -> String {
    let zero_copy: Vec<String> = all()
        .iter()
        .filter(|t| t.zero_copy)
        .map(|t| plugins::display_name(&t.name))
        .collect();
    format!(
        "transport `{}` has no zero-copy mode (its messages are copied through the \
         kernel); zero-copy runs on {}",
        plugins::display_name(name),
        zero_copy.join(", ")
    )
}

/// The RPMsg link's settings of a point: its notification mode, and its buffer mode,
/// which zero-copy points write in place — refused when `buffers=copy` was asked for
/// explicitly.
pub fn rpmsg_settings(values: &ParamValues, zero_copy: bool) -> Result<(Notify, Buffers), String> {
    let notify: Notify = values.choice(&NOTIFY);
    let buffers: Buffers = values.choice(&BUFFERS);
    if zero_copy && values.is_set(BUFFERS.name()) && buffers != Buffers::ZeroCopy {
        return Err(format!(
            "--zero-copy writes RPMsg packets in place: drop -p buffers={}",
            buffers.name()
        ));
    }
    Ok((
        notify,
        if zero_copy {
            Buffers::ZeroCopy
        } else {
            buffers
        },
    ))
}

/// A computation generic over the transport type.
pub trait WithTransport {
    /// Result of the computation.
    type Output;
    /// Runs the computation with a configured transport.
    fn with<T: Transport + Clone>(self, transport: T) -> Self::Output;
}

impl TransportLookupError {
    /// The error for a name no built-in transport has, naming a close one if any.
    fn unknown(name: &str) -> Self {
        let all = all();
        TransportLookupError::Unknown {
            name: name.to_string(),
            suggestion: xferbench_params::suggest::closest(name, all.iter().map(|t| &*t.name))
                .map(|c| format!(" (did you mean `{c}`?)"))
                .unwrap_or_default(),
            known: names(all.iter()),
        }
    }

    /// Whether the user's input is at fault (exit 2) rather than the system.
    pub fn is_usage(&self) -> bool {
        match self {
            TransportLookupError::Plugin(e) => e.is_usage(),
            _ => true,
        }
    }
}

/// Builds the named transport from `values` and runs `w` with it.
pub fn dispatch<W: WithTransport>(
    name: &str,
    values: &ParamValues,
    w: W,
) -> Result<W::Output, TransportLookupError> {
    Ok(match name {
        "shm" => w.with(Shm::from_values(values)?),
        "pipe" => w.with(Pipe::from_values(values)?),
        "unix" => w.with(Unix::from_values(values)?),
        "tcp" => w.with(Tcp::from_values(values)?),
        #[cfg(feature = "iceoryx2")]
        "iceoryx2" => w.with(Iceoryx2::from_values(values)?),
        RPMSG => return Err(TransportLookupError::OwnRig(name.to_string())),
        _ if plugins::is_plugin(name) => w.with(PluginTransport::open_values(
            name,
            values,
            &plugins::host_from_env(),
        )?),
        _ => {
            return Err(TransportLookupError::unknown(name));
        }
    })
}

/// Checks a transport name and parameters without running anything.
pub fn validate(name: &str, values: &ParamValues) -> Result<(), TransportLookupError> {
    struct Nothing;
    impl WithTransport for Nothing {
        type Output = ();
        fn with<T: Transport + Clone>(self, _: T) {}
    }
    if name == RPMSG {
        return Ok(values.check(name, &RPMSG_PARAMS)?);
    }
    if plugins::is_plugin(name) {
        // Checked against the probed description: this process never loads a plugin.
        let d = descriptor(name)?;
        return Ok(values.check(&plugins::display_name(name), &d.params)?);
    }
    dispatch(name, values, Nothing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dispatched_transport_is_described_by_its_own_constants() {
        struct Describe;
        impl WithTransport for Describe {
            type Output = Descriptor;
            fn with<T: Transport + Clone>(self, _: T) -> Descriptor {
                T::descriptor()
            }
        }
        for t in all() {
            match dispatch(&t.name, &ParamValues::new(), Describe) {
                Ok(d) => assert_eq!(d, t),
                Err(TransportLookupError::OwnRig(_)) => assert_eq!(t.name, RPMSG),
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(
            names(all().iter().filter(|t| t.zero_copy)),
            "shm, iceoryx2, rpmsg"
        );
    }

    #[test]
    fn zero_copy_rpmsg_points_write_in_place_unless_copy_is_asked_for() {
        let mut v = ParamValues::new();
        assert_eq!(
            rpmsg_settings(&v, true).unwrap(),
            (Notify::Kick, Buffers::ZeroCopy)
        );
        v.set(&BUFFERS, xferbench_params::Value::choice("copy"))
            .unwrap();
        assert!(
            rpmsg_settings(&v, true)
                .unwrap_err()
                .contains("buffers=copy")
        );
        assert_eq!(rpmsg_settings(&v, false).unwrap().1, Buffers::Copy);
    }
}
