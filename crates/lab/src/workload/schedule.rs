//! A `load` point's schedule: its offered rate, bursts and spacing ([`Schedule`],
//! `rate`, `burst`, `arrivals`) and one channel's share of it ([`ChannelSchedule`]).

use serde::{Deserialize, Serialize};
use xferbench_params::{ParamDef, ParamError, ParamMap, ParamValues, PointParams, Value};

/// Highest offered rate: one message a nanosecond.
pub const MAX_RATE: i64 = 1_000_000_000;

/// `rate`: offered messages per second of a point, all channels together.
pub const RATE: ParamDef = ParamDef::rate(
    crate::names::RATE,
    1,
    MAX_RATE,
    10_000,
    "offered messages per second of the point, all channels together (load)",
);
/// `burst`: messages sent back to back at each scheduled time.
pub const BURST: ParamDef = ParamDef::integer(
    "burst",
    1,
    65_536,
    1,
    "messages sent back to back at each scheduled time (load)",
);
/// `arrivals`: how the scheduled times are spaced.
pub const ARRIVALS: ParamDef = ParamDef::choice(
    "arrivals",
    <Arrivals as xferbench_params::Choices>::CHOICES,
    "uniform",
    "how the scheduled send times are spaced (load)",
);

/// How the scheduled send times are spaced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// Evenly: one burst every `burst / rate` seconds.
    #[default]
    Uniform,
    /// Exponential gaps of the same mean: a Poisson process, as independent clients
    /// would send.
    Poisson,
}

xferbench_params::choices!(Arrivals {
    Uniform => "uniform": "evenly spaced: one burst every burst/rate seconds",
    Poisson => "poisson": "exponential gaps of the same mean (a Poisson process of independent senders)",
});

/// A point's schedule: its offered rate and how sends are spaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schedule {
    /// Offered messages per second, all channels together.
    pub rate: u64,
    /// Messages sent back to back at each scheduled time.
    pub burst: u32,
    /// How the scheduled times are spaced.
    pub arrivals: Arrivals,
    /// The serving side echoes and latency is the round trip from the intended time
    /// (set where no clock is shared: `--remote`).
    #[serde(default)]
    pub echo: bool,
}

impl Default for Schedule {
    fn default() -> Self {
        Schedule {
            rate: 10_000,
            burst: 1,
            arrivals: Arrivals::Uniform,
            echo: false,
        }
    }
}

impl Schedule {
    /// A schedule at `rate` messages per second, evenly spaced, one at a time.
    pub fn at(rate: u64) -> Schedule {
        Schedule {
            rate,
            ..Schedule::default()
        }
    }

    /// The schedule of a point's values of the load workload's parameters (each not
    /// set at its default).
    pub fn of(values: &ParamValues) -> Schedule {
        Schedule {
            rate: values.integer(&RATE) as u64,
            burst: values.integer(&BURST) as u32,
            arrivals: values.choice(&ARRIVALS),
            echo: false,
        }
    }

    /// This schedule's share for one of `channels` channels.
    pub fn channel(&self, channels: usize) -> ChannelSchedule {
        ChannelSchedule {
            rate: self.rate as f64 / channels.max(1) as f64,
            burst: self.burst,
            arrivals: self.arrivals,
            echo: self.echo,
        }
    }
}

impl PointParams for Schedule {
    fn definitions() -> Vec<ParamDef> {
        vec![RATE, BURST, ARRIVALS]
    }

    /// The rate always; the burst and the spacing where they are not the defaults.
    /// Echo is a property of where the peers run (a result's settings say so), not
    /// a parameter.
    fn write(&self, map: &mut ParamMap) {
        map.put(&RATE, &Value::Integer(self.rate as i64));
        if self.burst != 1 {
            map.put(&BURST, &Value::Integer(i64::from(self.burst)));
        }
        if self.arrivals != Arrivals::Uniform {
            map.put_text(&ARRIVALS, xferbench_params::Choices::name(self.arrivals));
        }
    }

    fn read(map: &ParamMap) -> Result<Self, ParamError> {
        Ok(Schedule {
            rate: map.integer(&RATE)? as u64,
            burst: map.integer(&BURST)? as u32,
            arrivals: map.choice(&ARRIVALS)?,
            echo: false,
        })
    }
}

/// One channel's share of a [`Schedule`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ChannelSchedule {
    /// Messages per second on this channel.
    pub rate: f64,
    /// Messages back to back at each scheduled time.
    pub burst: u32,
    /// Spacing of the scheduled times.
    pub arrivals: Arrivals,
    /// Echo and time the round trip (no shared clock).
    pub echo: bool,
}

impl ChannelSchedule {
    /// Mean time between scheduled bursts, nanoseconds.
    pub fn mean_gap_ns(&self) -> f64 {
        f64::from(self.burst) * 1e9 / self.rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xferbench_params::PointParams;

    #[test]
    fn a_schedule_writes_and_reads_itself_through_its_definitions() {
        for s in [
            Schedule::at(10_000),
            Schedule {
                rate: 1_000_000,
                burst: 16,
                arrivals: Arrivals::Poisson,
                echo: false,
            },
        ] {
            xferbench_params::point::round_trips(&s).unwrap();
        }
        let m = Schedule::at(250_000).to_map();
        assert_eq!(m.as_params().len(), 1, "defaults are left out: {m:?}");
        for d in Schedule::definitions() {
            d.self_check().unwrap();
        }
    }
}
