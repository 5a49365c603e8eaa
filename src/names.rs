//! Enums that records and study files write as words (`OpenCL`, `device-event`, `GB/s`,
//! `verify-failed`, `A`). Each enum's name table is derived once with strum; serde reads and
//! writes the same words through [`serde_as_name!`], and an unknown word is refused with
//! every valid one listed.

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

/// `text` with every control character written as its escape (`\u{1b}`, `\n`): study files
/// and drivers supply names that a terminal would otherwise act on (clear the screen, move
/// the cursor, hide what follows).
pub fn escape_control(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Parses `text` as one of `T`'s names, or says which names there are.
pub fn parse<T>(text: &str) -> Result<T, String>
where
    T: FromStr + VariantArray + Copy + Into<&'static str>,
{
    text.parse().map_err(|_| {
        let names: Vec<&'static str> = T::VARIANTS.iter().map(|v| (*v).into()).collect();
        format!(
            "unknown variant `{text}`, expected one of {}",
            names.join(", ")
        )
    })
}

/// Serialises an enum as its strum name and deserialises it with [`parse`].
macro_rules! serde_as_name {
    ($($t:ty),+ $(,)?) => {$(
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                s.serialize_str(<&'static str>::from(*self))
            }
        }

        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                $crate::names::parse::<$t>(&text).map_err(serde::de::Error::custom)
            }
        }
    )+};
}

/// Declares an enum written as words: the name table (strum), the usual value traits, and
/// serde through [`serde_as_name!`]. Strum attributes inside name each variant's words.
macro_rules! named_enum {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($body:tt)* }) => {
        #[derive(
            Debug,
            Clone,
            Copy,
            PartialEq,
            Eq,
            Hash,
            PartialOrd,
            Ord,
            strum::Display,
            strum::EnumString,
            strum::IntoStaticStr,
            strum::VariantArray,
        )]
        $(#[$meta])*
        $vis enum $name { $($body)* }

        $crate::names::serde_as_name!($name);
    };
}

pub(crate) use {named_enum, serde_as_name};

#[cfg(test)]
mod escape_tests {
    use super::escape_control;

    #[test]
    fn control_characters_are_escaped_and_plain_text_is_kept() {
        assert_eq!(escape_control("matvec/listing2 é"), "matvec/listing2 é");
        assert_eq!(
            escape_control("a\u{1b}[2Jb\nc\u{7}"),
            "a\\u{1b}[2Jb\\nc\\u{7}"
        );
        assert!(!escape_control("x\u{9b}31m").chars().any(char::is_control));
    }
}
