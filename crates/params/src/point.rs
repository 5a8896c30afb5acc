//! A point's parameters, written and read only through their definitions.
//!
//! A result file stores a point's parameters as a map of names to text in their
//! machine form (`size=65536`, `rate=10000`). A type that holds a point's
//! parameters ([`PointParams`]) writes itself into a [`ParamMap`] and reads itself
//! back through the [`ParamDef`]s it owns, so no code outside a definition spells a
//! parameter's name, and a value a result records is always one its definition
//! reads back.

use crate::choices::Choices;
use crate::def::ParamDef;
use crate::error::ParamError;
use crate::value::Value;
use crate::values::Params;

/// A point's parameters by name, in their machine form; written and read through
/// definitions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParamMap {
    map: Params,
}

impl ParamMap {
    /// No parameters.
    pub fn new() -> ParamMap {
        ParamMap::default()
    }

    /// The parameters of a result file or a peer's hello, to be read through
    /// definitions.
    pub fn from_params(map: Params) -> ParamMap {
        ParamMap { map }
    }

    /// Sets `def` to `v`, stored in its machine form. A value its definition refuses
    /// is a bug of the caller (values come from parsing or from typed fields).
    pub fn put(&mut self, def: &ParamDef, v: &Value) {
        debug_assert!(def.check(v).is_ok(), "{}: {v:?}", def.name);
        self.map.insert(def.name.to_string(), def.machine(v));
    }

    /// Sets `def` to the text `machine`, already in its machine form (a value read
    /// from another map, or a name of a [`Choices`] type).
    pub fn put_text(&mut self, def: &ParamDef, machine: &str) {
        self.map.insert(def.name.to_string(), machine.to_string());
    }

    /// Sets every value of `values` by its definition in `defs` (a transport's own
    /// parameters).
    pub fn put_all(&mut self, values: &crate::values::ParamValues, defs: &[ParamDef]) {
        self.map.extend(values.machine(defs));
    }

    /// Whether `def` has a value here.
    pub fn has(&self, def: &ParamDef) -> bool {
        self.map.contains_key(&*def.name)
    }

    /// The value of `def` as its definition reads it; `None` when the map has none.
    pub fn get(&self, def: &ParamDef) -> Result<Option<Value>, ParamError> {
        self.map.get(&*def.name).map(|t| def.parse(t)).transpose()
    }

    /// The value of `def`, or its default when the map has none.
    pub fn value(&self, def: &ParamDef) -> Result<Value, ParamError> {
        Ok(self.get(def)?.unwrap_or_else(|| def.default.clone()))
    }

    /// The text stored for `def`, as it is.
    pub fn text(&self, def: &ParamDef) -> Option<&str> {
        self.map.get(&*def.name).map(String::as_str)
    }

    /// A whole number or rate: as stored, or the default.
    pub fn integer(&self, def: &ParamDef) -> Result<i64, ParamError> {
        match self.value(def)? {
            Value::Integer(n) => Ok(n),
            other => Err(self.kind_error(def, &other)),
        }
    }

    /// A whole number read back as the integer type of its field (0 where it does not
    /// fit, which the definition's bounds rule out).
    pub fn whole<T: TryFrom<i64> + Default>(&self, def: &ParamDef) -> Result<T, ParamError> {
        Ok(T::try_from(self.integer(def)?).unwrap_or_default())
    }

    /// A byte count: as stored, or the default.
    pub fn bytes(&self, def: &ParamDef) -> Result<u64, ParamError> {
        match self.value(def)? {
            Value::Bytes(n) => Ok(n),
            other => Err(self.kind_error(def, &other)),
        }
    }

    /// A boolean: as stored, or the default.
    pub fn boolean(&self, def: &ParamDef) -> Result<bool, ParamError> {
        match self.value(def)? {
            Value::Bool(b) => Ok(b),
            other => Err(self.kind_error(def, &other)),
        }
    }

    /// A value of a [`Choices`] type: as stored, or the default.
    pub fn choice<T: Choices>(&self, def: &ParamDef) -> Result<T, ParamError> {
        let v = self.value(def)?;
        let name = def.machine(&v);
        T::from_name(&name).ok_or_else(|| self.kind_error(def, &v))
    }

    fn kind_error(&self, def: &ParamDef, v: &Value) -> ParamError {
        ParamError::Invalid {
            name: def.name.to_string(),
            value: def.machine(v),
            accepts: def.accepts(),
        }
    }

    /// Removes `def`'s value.
    pub fn remove(&mut self, def: &ParamDef) {
        self.map.remove(&*def.name);
    }

    /// The map, as result files store it.
    pub fn into_params(self) -> Params {
        self.map
    }

    /// The map, borrowed.
    pub fn as_params(&self) -> &Params {
        &self.map
    }
}

/// A type holding some of a point's parameters, which it writes into and reads from a
/// [`ParamMap`] through the definitions it owns ([`PointParams::definitions`]).
///
/// `read(write(x)) == x` for every value (each implementation's tests check it with
/// [`round_trips`]), and a value `write` stores is one its definition reads back.
pub trait PointParams: Sized {
    /// The definitions of every parameter the type writes.
    fn definitions() -> Vec<ParamDef>;

    /// Stores the parameters in `map`.
    fn write(&self, map: &mut ParamMap);

    /// Reads them from `map`; a parameter the map lacks takes its default.
    fn read(map: &ParamMap) -> Result<Self, ParamError>;

    /// The parameters alone, as a map.
    fn to_map(&self) -> ParamMap {
        let mut m = ParamMap::new();
        self.write(&mut m);
        m
    }
}

/// Whether `value` reads back as itself from what it writes, and writes only names
/// and values its definitions know: the check every [`PointParams`] implementation's
/// tests make.
pub fn round_trips<T: PointParams + PartialEq + std::fmt::Debug>(value: &T) -> Result<(), String> {
    let map = value.to_map();
    let defs = T::definitions();
    for (name, text) in map.as_params() {
        let def = defs
            .iter()
            .find(|d| d.name == *name)
            .ok_or_else(|| format!("`{name}` is written but not defined"))?;
        def.parse(text)
            .map_err(|e| format!("`{name}={text}` does not read back: {e}"))?;
    }
    let back = T::read(&map).map_err(|e| e.to_string())?;
    if back == *value {
        Ok(())
    } else {
        Err(format!("{value:?} reads back as {back:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RATE: ParamDef = ParamDef::rate("rate", 1, 1_000_000_000, 10_000, "messages per second");
    const BURST: ParamDef = ParamDef::integer("burst", 1, 1000, 1, "messages per burst");

    #[derive(Debug, PartialEq)]
    struct Load {
        rate: i64,
        burst: i64,
    }

    impl PointParams for Load {
        fn definitions() -> Vec<ParamDef> {
            vec![RATE, BURST]
        }
        fn write(&self, map: &mut ParamMap) {
            map.put(&RATE, &Value::Integer(self.rate));
            if self.burst != 1 {
                map.put(&BURST, &Value::Integer(self.burst));
            }
        }
        fn read(map: &ParamMap) -> Result<Self, ParamError> {
            Ok(Load {
                rate: map.integer(&RATE)?,
                burst: map.integer(&BURST)?,
            })
        }
    }

    #[test]
    fn a_point_writes_and_reads_itself_through_its_definitions() {
        let l = Load {
            rate: 250_000,
            burst: 8,
        };
        round_trips(&l).unwrap();
        assert_eq!(l.to_map().as_params()["rate"], "250000");
        assert_eq!(RATE.display(&Value::Integer(250_000)), "250k/s");
        let only_rate = ParamMap::from_params([("rate".to_string(), "10k".to_string())].into());
        assert_eq!(
            Load::read(&only_rate).unwrap(),
            Load {
                rate: 10_000,
                burst: 1
            }
        );
        let bad = ParamMap::from_params([("rate".to_string(), "fast".to_string())].into());
        let e = Load::read(&bad).unwrap_err().to_string();
        assert!(e.contains("`rate`") && e.contains("10k"), "{e}");
    }

    #[test]
    fn rates_are_bounded_and_ranged_like_numbers() {
        assert_eq!(RATE.parse("1M"), Ok(Value::Integer(1_000_000)));
        for bad in ["0", "-5", "fast", "2G"] {
            let e = RATE.parse(bad).unwrap_err().to_string();
            assert!(e.contains("`rate`"), "{bad}: {e}");
        }
        assert_eq!(
            RATE.parse_list("10k..80k").unwrap(),
            [10_000, 20_000, 40_000, 80_000].map(Value::Integer)
        );
        RATE.self_check().unwrap();
    }
}
