//! Rows as Postgres CSV text, for `COPY … FROM STDIN (FORMAT csv)` (the benchmark's raw-COPY
//! baseline, and any bulk load).

use sea_orm::{EntityTrait, ModelTrait, Value};

/// The models as CSV lines, in `columns` order.
pub fn csv_rows<'a, M, C>(models: impl Iterator<Item = &'a M>, columns: &[C]) -> String
where
    M: ModelTrait + 'a,
    C: Copy + Into<<M::Entity as EntityTrait>::Column>,
{
    let mut out = String::new();
    for model in models {
        for (i, column) in columns.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_csv_field(&mut out, model.get((*column).into()));
        }
        out.push('\n');
    }
    out
}

/// One value in Postgres' CSV: NULL is an empty unquoted field, text is always quoted (so an
/// empty string stays a string), bytea in its hex form.
fn push_csv_field(out: &mut String, value: Value) {
    use std::fmt::Write;
    let quote = |out: &mut String, s: &str| {
        out.push('"');
        out.push_str(&s.replace('"', "\"\""));
        out.push('"');
    };
    match value {
        Value::Bool(Some(b)) => out.push_str(if b { "t" } else { "f" }),
        Value::TinyInt(Some(v)) => write!(out, "{v}").expect("string"),
        Value::SmallInt(Some(v)) => write!(out, "{v}").expect("string"),
        Value::Int(Some(v)) => write!(out, "{v}").expect("string"),
        Value::BigInt(Some(v)) => write!(out, "{v}").expect("string"),
        Value::String(Some(s)) => quote(out, &s),
        Value::Json(Some(j)) => quote(out, &j.to_string()),
        Value::Bytes(Some(b)) => {
            out.push_str("\\x");
            for byte in b.iter() {
                write!(out, "{byte:02x}").expect("string");
            }
        }
        // Every column type the schema uses is above; anything else is NULL only.
        _ => {}
    }
}
