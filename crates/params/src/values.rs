//! A set of values checked against their owner's definitions.

use crate::choices::Choices;
use crate::def::ParamDef;
use crate::error::ParamError;
use crate::value::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// Parameter values as text, by name: what a command line gives, what a result file
/// and a peer's hello carry (in their machine form, [`ParamDef::machine`]).
pub type Params = BTreeMap<String, String>;

/// Values set explicitly, each checked against its definition; what is not set
/// takes the definition's default.
///
/// The typed getters take the definition (`values.bytes(&CAPACITY)`), so a
/// transport reads its parameters without a string comparison. A getter asked for a
/// kind the definition does not have answers the definition's default.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParamValues {
    set: BTreeMap<String, Value>,
}

impl ParamValues {
    /// No value set: every parameter at its default.
    pub fn new() -> ParamValues {
        ParamValues::default()
    }

    /// Reads `raw` against `defs`; every name must be one of them. `owner` names
    /// who declares them, for the error message.
    pub fn parse(owner: &str, defs: &[ParamDef], raw: &Params) -> Result<ParamValues, ParamError> {
        let mut out = ParamValues::new();
        for (name, text) in raw {
            let def = find(owner, defs, name)?;
            out.set.insert(name.clone(), def.parse(text)?);
        }
        Ok(out)
    }

    /// Checks that every value set is one of `defs` and of its kind and bounds.
    pub fn check(&self, owner: &str, defs: &[ParamDef]) -> Result<(), ParamError> {
        for (name, v) in &self.set {
            find(owner, defs, name)?.check(v)?;
        }
        Ok(())
    }

    /// Sets the value of `def`, after checking it.
    pub fn set(&mut self, def: &ParamDef, v: Value) -> Result<(), ParamError> {
        def.check(&v)?;
        self.set.insert(def.name.to_string(), v);
        Ok(())
    }

    /// The value of `def`: as set, or its default.
    pub fn value<'a>(&'a self, def: &'a ParamDef) -> &'a Value {
        self.set.get(&*def.name).unwrap_or(&def.default)
    }

    /// The value set for `name`, if one was.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.set.get(name)
    }

    /// Whether a value is set for `name`.
    pub fn is_set(&self, name: &str) -> bool {
        self.set.contains_key(name)
    }

    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// The values set, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.set.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The values set, as result files store them.
    pub fn machine(&self, defs: &[ParamDef]) -> Params {
        self.set
            .iter()
            .map(|(k, v)| {
                let text = defs
                    .iter()
                    .find(|d| d.name == *k)
                    .map_or_else(|| fallback_text(v), |d| d.machine(v));
                (k.clone(), text)
            })
            .collect()
    }

    /// A whole number.
    pub fn integer(&self, def: &ParamDef) -> i64 {
        match (self.value(def), &def.default) {
            (Value::Integer(n), _) | (_, Value::Integer(n)) => *n,
            _ => 0,
        }
    }

    /// A byte count (0 when unset).
    pub fn bytes(&self, def: &ParamDef) -> u64 {
        self.opt_bytes(def).unwrap_or(0)
    }

    /// A byte count, or `None` for the system's default ([`Value::Unset`]).
    pub fn opt_bytes(&self, def: &ParamDef) -> Option<u64> {
        match (self.value(def), &def.default) {
            (Value::Bytes(n), _) => Some(*n),
            (Value::Unset, _) => None,
            (_, Value::Bytes(n)) => Some(*n),
            _ => None,
        }
    }

    /// A duration.
    pub fn duration(&self, def: &ParamDef) -> Duration {
        match (self.value(def), &def.default) {
            (Value::Duration(d), _) | (_, Value::Duration(d)) => *d,
            _ => Duration::ZERO,
        }
    }

    /// A boolean.
    pub fn boolean(&self, def: &ParamDef) -> bool {
        match (self.value(def), &def.default) {
            (Value::Bool(b), _) | (_, Value::Bool(b)) => *b,
            _ => false,
        }
    }

    /// Text.
    pub fn text(&self, def: &ParamDef) -> String {
        match (self.value(def), &def.default) {
            (Value::Text(t), _) | (_, Value::Text(t)) => t.to_string(),
            _ => String::new(),
        }
    }

    /// One of a [`Choices`] type's values.
    pub fn choice<T: Choices>(&self, def: &ParamDef) -> T {
        let by_name = |v: &Value| match v {
            Value::Choice(name) => T::from_name(name),
            _ => None,
        };
        by_name(self.value(def))
            .or_else(|| by_name(&def.default))
            .unwrap_or(T::ALL[0])
    }
}

fn find<'a>(owner: &str, defs: &'a [ParamDef], name: &str) -> Result<&'a ParamDef, ParamError> {
    defs.iter()
        .find(|d| d.name == name)
        .ok_or_else(|| ParamError::Unknown {
            name: name.to_string(),
            owner: owner.to_string(),
            known: if defs.is_empty() {
                "(no parameters)".into()
            } else {
                defs.iter().map(|d| &*d.name).collect::<Vec<_>>().join(", ")
            },
        })
}

fn fallback_text(v: &Value) -> String {
    ParamDef::text("", "", "", "").machine(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPACITY: ParamDef = ParamDef::bytes("capacity", 4096, 1 << 30, 4 << 20, "");
    const SNDBUF: ParamDef = ParamDef::bytes_or_unset("sndbuf", 1, 1 << 30, "os", "");
    const NODELAY: ParamDef = ParamDef::boolean("nodelay", true, "");
    const DEFS: &[ParamDef] = &[CAPACITY, SNDBUF, NODELAY];

    fn raw(pairs: &[(&str, &str)]) -> Params {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn typed_getters_answer_set_values_or_defaults() {
        let v = ParamValues::parse("tcp", DEFS, &raw(&[("capacity", "64KiB")])).unwrap();
        assert_eq!(v.bytes(&CAPACITY), 65536);
        assert_eq!(v.opt_bytes(&SNDBUF), None);
        assert!(v.boolean(&NODELAY));
        assert_eq!(v.machine(DEFS), raw(&[("capacity", "65536")]));
        let again = ParamValues::parse("tcp", DEFS, &v.machine(DEFS)).unwrap();
        assert_eq!(again, v, "the machine form reads back");
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let e = ParamValues::parse("pipe", DEFS, &raw(&[("nosuch", "1")]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`nosuch`") && e.contains("pipe") && e.contains("capacity, sndbuf, nodelay"),
            "{e}"
        );
        let e = ParamValues::parse("unix", &[], &raw(&[("x", "1")])).unwrap_err();
        assert!(e.to_string().contains("(no parameters)"));
    }
}
