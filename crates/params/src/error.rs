//! Why a parameter's value or name was refused.

/// A value or a parameter name that its definitions refuse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    /// The value does not parse, or is out of range.
    #[error("invalid value {value:?} for parameter `{name}`: expected {accepts}")]
    Invalid {
        /// Parameter name.
        name: String,
        /// The value given.
        value: String,
        /// What is accepted.
        accepts: String,
    },
    /// The owner has no parameter of that name.
    #[error("unknown parameter `{name}` for {owner}; it accepts: {known}")]
    Unknown {
        /// Parameter name.
        name: String,
        /// Transport, workload or study name.
        owner: String,
        /// Comma-separated list of accepted names.
        known: String,
    },
    /// A list or range of values that does not expand (an empty item, a range that
    /// runs backwards, a bad step, too many values).
    #[error("parameter `{name}`: {problem}")]
    List {
        /// Parameter name.
        name: String,
        /// What is wrong with the list.
        problem: String,
    },
}
