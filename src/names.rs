//! Enums that records and study files write as words (`OpenCL`, `device-event`, `GB/s`): each
//! name table is derived once with strum ([`named_enum!`]); serde reads and writes the same
//! words, and an unknown word is refused with every valid one listed.

use std::str::FromStr;

use strum::VariantArray;

/// A C identifier: a macro, kernel or allow-list name.
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[derive(Debug, thiserror::Error)]
#[error("unknown variant `{text}`, expected one of {names}")]
pub struct UnknownName {
    pub text: String,
    pub names: String,
}

pub fn parse<T>(text: &str) -> Result<T, UnknownName>
where
    T: FromStr + VariantArray + Copy + Into<&'static str>,
{
    text.parse().map_err(|_| {
        let names: Vec<&'static str> = T::VARIANTS.iter().map(|v| (*v).into()).collect();
        UnknownName {
            text: text.to_string(),
            names: names.join(", "),
        }
    })
}

/// Declares an enum written as words: the name table (strum), the usual value traits, and
/// serde as its strum name, read back with [`parse`]. Strum attributes inside name each
/// variant's words.
macro_rules! named_enum {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($body:tt)* }) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[derive(strum::Display, strum::EnumString, strum::IntoStaticStr, strum::VariantArray)]
        $(#[$meta])*
        $vis enum $name { $($body)* }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                s.serialize_str(<&'static str>::from(*self))
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                $crate::names::parse::<$name>(&text).map_err(serde::de::Error::custom)
            }
        }
    };
}

pub(crate) use named_enum;
