//! Closed sets of named values (`--backend af_xdp`, `--lab-rx drop`), defined once with
//! their names and help, without this crate knowing the command line: the commands turn a
//! [`Choice`] into an option's possible values.

/// One of a closed set of values, each with the name a user types and a line of help.
pub trait Choice: Copy + PartialEq + Send + Sync + 'static {
    /// Every value, in the order help lists them.
    const ALL: &'static [Self];
    /// The name as a user spells it.
    fn name(self) -> &'static str;
    /// What the value does, from its doc comment.
    fn help(self) -> &'static str;
    /// The value named `s`, if there is one.
    fn from_name(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.name() == s)
    }
}

/// Defines a fieldless enum whose variants each carry a name (`Variant = "name"`), and
/// implements [`Choice`] (the help is the variant's doc comment) and `Display` (the name)
/// for it.
#[macro_export]
macro_rules! choice {
    (
        $(#[$meta:meta])*
        $vis:vis enum $ty:ident {
            $( $(#[doc = $doc:literal])* $variant:ident = $name:literal ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis enum $ty {
            $( $(#[doc = $doc])* $variant ),*
        }

        impl $crate::choice::Choice for $ty {
            const ALL: &'static [Self] = &[$(Self::$variant),*];
            fn name(self) -> &'static str {
                match self { $(Self::$variant => $name),* }
            }
            fn help(self) -> &'static str {
                match self { $(Self::$variant => concat!($($doc),*).trim_ascii()),* }
            }
        }

        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str($crate::choice::Choice::name(*self))
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::Choice;

    crate::choice! {
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        enum Colour {
            /// The colour of
            /// the sky.
            Blue = "blue",
            Dark = "dark_red",
        }
    }

    #[test]
    fn names_help_and_display_come_from_the_definition() {
        assert_eq!(Colour::ALL, &[Colour::Blue, Colour::Dark]);
        assert_eq!(Colour::from_name("dark_red"), Some(Colour::Dark));
        assert_eq!(Colour::from_name("Dark"), None);
        assert_eq!(Colour::Blue.help(), "The colour of the sky.");
        assert_eq!(Colour::Dark.help(), "");
        assert_eq!(Colour::Dark.to_string(), "dark_red");
    }
}
