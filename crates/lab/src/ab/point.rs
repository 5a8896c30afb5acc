//! The parameters of `ab`'s points: which side, which command.

use xferbench_params::{Choices, ParamDef, ParamError, ParamMap, PointParams};

/// Which of the two commands a point runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The baseline.
    A,
    /// The change.
    B,
}

xferbench_params::choices!(Side {
    A => "A": "command A, the baseline",
    B => "B": "command B, the change",
});

/// `side`: which of `ab`'s commands a point runs.
pub const SIDE: ParamDef = ParamDef::choice(
    "side",
    <Side as Choices>::CHOICES,
    "A",
    "which of ab's two commands the point runs",
);

/// `command`: the shell command a point of `ab` runs once per run.
pub const COMMAND: ParamDef = ParamDef::text(
    "command",
    "a command for sh -c",
    "true",
    "the command run with sh -c once per run",
);

/// The parameters of one of `ab`'s points, under `workload=command`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbPoint {
    /// A or B.
    pub side: Side,
    /// The command.
    pub command: String,
}

impl PointParams for AbPoint {
    fn definitions() -> Vec<ParamDef> {
        vec![crate::workload::WORKLOAD, SIDE, COMMAND]
    }

    fn write(&self, map: &mut ParamMap) {
        map.put_text(
            &crate::workload::WORKLOAD,
            crate::workload::RecordedWorkload::Command.name(),
        );
        map.put_text(&SIDE, self.side.name());
        map.put_text(&COMMAND, &self.command);
    }

    fn read(map: &ParamMap) -> Result<Self, ParamError> {
        Ok(AbPoint {
            side: map.choice(&SIDE)?,
            command: map.text(&COMMAND).unwrap_or_default().to_string(),
        })
    }
}
