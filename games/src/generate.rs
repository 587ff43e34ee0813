//! The registry's generator: from one line per game family, the types the rest of the
//! workspace uses (`GameSpec`, `GameChoice`, `AnyGame`) and the `match`es over the families.

/// The registry's generator (`lib.rs` holds its one call). For a line
/// `"cc3p" => Cc3p(cc3p::Cc3pParams)` it writes, in the crate root:
///
/// ```text
/// pub mod cc3p;
/// pub enum GameSpec   { Cc3p(cc3p::Cc3pParams), … }         // run.json's {"game": "cc3p", …}
/// pub enum GameChoice { Cc3p(cc3p::Cc3pParams), … }         // `kingmaker build cc3p …` (clap)
/// pub enum AnyGame    { Cc3p(<Cc3pParams as GameFamily>::Game), … }
/// impl GameSpec   { build, family, FAMILIES, examples }     // one `match` arm per line
/// impl GameChoice { spec }
/// impl AnyGame    { reduction, verdict, view }
/// pub fn game_commands() -> Vec<(&str, GameCommand)>
/// macro_rules! each_game { … }                               // forwards a call to the game inside
/// ```
///
/// A `reductions` line adds a `GameSpec` and an `AnyGame` variant, but no `GameChoice` (never
/// chosen on the command line). What every game answers alike (the `Game` and `Notation`
/// traits on `AnyGame`, layers, counts) is written by hand in `registry.rs` with `each_game!`;
/// `cargo doc -p kingmaker-games --open` shows the generated types with their documentation.
macro_rules! games {
    (
        families { $($name:tt => $variant:ident($module:ident :: $pname:ident),)* }
        reductions { $($rname:tt => $rvariant:ident($rmodule:ident :: $rpname:ident),)* }
    ) => {
        $( pub mod $module; )*

        /// A game family and its parameters, as written to `run.json` (`{"game": NAME, ...}`)
        /// and sent to workers.
        #[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        #[serde(tag = "game")]
        pub enum GameSpec {
            $(
                #[doc = concat!("The `", $name, "` family.")]
                #[serde(rename = $name)] $variant($module::$pname),
            )*
            $(
                #[doc = concat!("The `", $rname, "` reduction.")]
                #[serde(rename = $rname)] $rvariant($rmodule::$rpname),
            )*
        }

        /// The game to work on, with its parameters, as the command line chooses it
        /// (`kingmaker build cc3p --level 1`).
        #[derive(clap::Subcommand, Clone, Debug)]
        pub enum GameChoice {
            $( #[doc = concat!("The `", $name, "` family.")] #[command(name = $name, about = <$module::$pname as $crate::family::GameFamily>::ABOUT)] $variant($module::$pname), )*
        }

        impl GameChoice {
            /// The run's game.
            pub fn spec(&self) -> GameSpec {
                match self {
                    $( GameChoice::$variant(p) => GameSpec::$variant(p.clone()), )*
                }
            }
        }

        /// Every game the kernel can solve, behind one type (one kernel instantiation, static
        /// dispatch inside each game's own code). A process holds one or two of these, so the
        /// size difference between variants does not matter.
        #[allow(clippy::large_enum_variant)]
        pub enum AnyGame {
            $(
                #[doc = concat!("A `", $name, "` game.")]
                $variant(<$module::$pname as $crate::family::GameFamily>::Game),
            )*
            $(
                #[doc = concat!("A `", $rname, "` reduction's game.")]
                $rvariant(<$rmodule::$rpname as $crate::family::GameFamily>::Game),
            )*
        }

        impl GameSpec {
            /// Construct the game (may take a moment: ranking tables, catalogues).
            pub fn build(&self) -> anyhow::Result<AnyGame> {
                Ok(match self {
                    $( GameSpec::$variant(p) => AnyGame::$variant($crate::family::GameFamily::build(p)?), )*
                    $( GameSpec::$rvariant(p) => AnyGame::$rvariant($crate::family::GameFamily::build(p)?), )*
                })
            }

            /// The family name used on the command line and in summaries.
            pub fn family(&self) -> &'static str {
                match self {
                    $( GameSpec::$variant(_) => $name, )*
                    $( GameSpec::$rvariant(_) => $rname, )*
                }
            }

            /// Every family's name, reductions too.
            pub const FAMILIES: &'static [&'static str] = &[$($name,)* $($rname,)*];

            /// Every family's [`GameFamily::examples`], for the tests every game passes.
            pub fn examples() -> Vec<GameSpec> {
                let mut out = Vec::new();
                $( out.extend(<$module::$pname as $crate::family::GameFamily>::examples().into_iter().map(GameSpec::$variant)); )*
                $( out.extend(<$rmodule::$rpname as $crate::family::GameFamily>::examples().into_iter().map(GameSpec::$rvariant)); )*
                out
            }

            fn family_params(&self) -> &dyn registry::FamilyParams {
                match self {
                    $( GameSpec::$variant(p) => p, )*
                    $( GameSpec::$rvariant(p) => p, )*
                }
            }
        }

        impl AnyGame {
            /// The full game's table is expanded from this one's, for a game solved in place of a
            /// larger one ([`GameSpec::reduced`]).
            pub fn reduction(&self) -> Option<&dyn $crate::reduction::Reduction> {
                match self {
                    $( AnyGame::$rvariant(g) => Some(g), )*
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }
        }

        impl AnyGame {
            /// What the solved layers mean together at `index` ([`GameFamily::verdict`], or the
            /// generic reading).
            pub fn verdict(
                &self,
                index: u64,
                at: &$crate::reading::LayersAt,
            ) -> Result<$crate::reading::Verdict, kingmaker_tablefmt::FormatError> {
                let own = match self {
                    $( AnyGame::$variant(g) => <$module::$pname as $crate::family::GameFamily>::verdict(g, index, at), )*
                    $( AnyGame::$rvariant(g) => <$rmodule::$rpname as $crate::family::GameFamily>::verdict(g, index, at), )*
                };
                own.unwrap_or_else(|| Ok($crate::reading::verdict::generic(self, at)))
            }

            /// How the game is shown: its family's view ([`GameFamily::view`]), or the
            /// two-player view.
            pub fn view(self: &std::sync::Arc<Self>) -> Box<dyn $crate::view::GameView> {
                let own = match &**self {
                    $( AnyGame::$variant(_) => <$module::$pname as $crate::family::GameFamily>::view(self), )*
                    $( AnyGame::$rvariant(_) => <$rmodule::$rpname as $crate::family::GameFamily>::view(self), )*
                };
                own.unwrap_or_else(|| Box::new($crate::view::two_player::TwoPlayerView::new(self.clone())))
            }
        }

        /// Every family's own commands ([`GameFamily::commands`]), each with its family's name.
        pub fn game_commands() -> Vec<(&'static str, $crate::view::GameCommand)> {
            let mut out = Vec::new();
            $( out.extend(<$module::$pname as $crate::family::GameFamily>::commands().into_iter().map(|c| ($name, c))); )*
            out
        }

        /// Forward a method to the game inside an [`AnyGame`].
        macro_rules! each_game {
            ($self_:expr, $g:ident => $body:expr) => {
                match $self_ {
                    $( AnyGame::$variant($g) => $body, )*
                    $( AnyGame::$rvariant($g) => $body, )*
                }
            };
        }
    };
}
