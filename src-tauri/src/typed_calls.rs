//! Writes `ui/src/lib/bindings/calls.ts` (`make bindings`): one typed TypeScript function per
//! registered command, read from the command's own Rust signature in `src/commands/<area>.rs`.
//! The UI calls `stopNow({ instance, via, command, providerId })`, so a renamed argument, a
//! changed type or a dropped command fails `svelte-check` instead of failing at run time.
//!
//! How a signature becomes TypeScript, in order:
//! - parameters Tauri fills in itself (`State`, `AppHandle`, `Window`, …) are left out;
//! - the others become the fields of one object argument, named in camelCase, as Tauri's invoke
//!   keys are (no command uses `rename_all`; the test fails if one does);
//! - a `Channel<T>` parameter takes a callback `(message: T) => void`; the generated function
//!   wraps it in a `Channel`, so screens never touch IPC;
//! - `Result<T, ApiError>` answers `T` (errors arrive as `BackendError` through `call`), no return
//!   type answers `void`;
//! - types: strings, numbers (`TS_RS_LARGE_INT=number`), booleans, `Option<T>` → `T | null`,
//!   `Vec<T>` → `T[]`, tuples, maps → `Record`, `serde_json::Value` → `unknown` (any JSON: look
//!   before use), `DateTime` and `Decimal` → `string`, and every other named type must be a ts-rs
//!   binding (`bindings/<Name>.ts`). Anything else fails the test, naming the command; it never
//!   becomes `any`.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use syn::{FnArg, GenericArgument, Pat, PathArguments, ReturnType, Type};

use super::COMMAND_AREAS;

/// Parameters Tauri injects; the UI never sends them.
const INJECTED: &[&str] = &[
    "State",
    "AppHandle",
    "Window",
    "WebviewWindow",
    "Webview",
    "Request",
];

/// Rust types that cross as a TypeScript type ts-rs does not export on its own.
const PLAIN: &[(&str, &str)] = &[
    ("String", "string"),
    ("str", "string"),
    ("PathBuf", "string"),
    ("char", "string"),
    // A secret (`ssh::Secret`) arrives as the string the user typed; it never goes back out.
    ("Secret", "string"),
    // Money crosses as a decimal string, as every ts-rs type here writes it (`ts(type = "string")`).
    ("Decimal", "string"),
    ("bool", "boolean"),
    ("u8", "number"),
    ("u16", "number"),
    ("u32", "number"),
    ("u64", "number"),
    ("usize", "number"),
    ("i8", "number"),
    ("i16", "number"),
    ("i32", "number"),
    ("i64", "number"),
    ("isize", "number"),
    ("f32", "number"),
    ("f64", "number"),
];

/// A channel whose messages are not one Rust type: `terminal_open` sends raw bytes (an
/// `ArrayBuffer`) and then one JSON `TerminalExit` (`InvokeResponseBody`).
const CHANNEL_MESSAGES: &[(&str, &str, &[&str])] = &[(
    "InvokeResponseBody",
    "ArrayBuffer | TerminalExit",
    &["TerminalExit"],
)];

/// One command as the UI sees it.
struct Call {
    name: String,
    area: String,
    /// `(camelCase key, TS type, is a channel)`.
    params: Vec<(String, String, bool)>,
    answer: String,
    /// Its Rust doc comment's lines, repeated for the UI.
    doc: Vec<String>,
    /// The ts-rs bindings its types name.
    imports: BTreeSet<String>,
}

/// Maps one command's types, gathering the bindings they import.
struct Mapper<'a> {
    command: &'a str,
    imports: BTreeSet<String>,
}

impl Mapper<'_> {
    fn fail(&self, what: &str) -> ! {
        panic!(
            "command `{}`: {what}. Map it in src-tauri/src/typed_calls.rs (never to `any`)",
            self.command
        )
    }

    fn ts(&mut self, ty: &Type) -> String {
        match ty {
            Type::Reference(reference) => self.ts(&reference.elem),
            Type::Paren(inner) => self.ts(&inner.elem),
            Type::Tuple(tuple) if tuple.elems.is_empty() => "void".to_owned(),
            Type::Tuple(tuple) => {
                let parts: Vec<_> = tuple.elems.iter().map(|elem| self.ts(elem)).collect();
                format!("[{}]", parts.join(", "))
            }
            Type::Slice(slice) => array_of(&self.ts(&slice.elem)),
            Type::Path(path) if path.qself.is_none() => {
                let segments: Vec<String> = path
                    .path
                    .segments
                    .iter()
                    .map(|segment| segment.ident.to_string())
                    .collect();
                let last = path.path.segments.last().expect("a path has a segment");
                let name = last.ident.to_string();
                let args = generic_types(&last.arguments);
                // Any JSON (a wizard's draft): the UI must look at it before using it.
                if segments.join("::") == "serde_json::Value" {
                    return "unknown".to_owned();
                }
                if let Some((_, ts)) = PLAIN.iter().find(|(rust, _)| *rust == name) {
                    return (*ts).to_owned();
                }
                match (name.as_str(), args.as_slice()) {
                    ("Option", [inner]) => match self.ts(inner).as_str() {
                        "unknown" => "unknown".to_owned(),
                        inner => format!("{inner} | null"),
                    },
                    ("Vec" | "VecDeque" | "BTreeSet" | "HashSet", [inner]) => {
                        array_of(&self.ts(inner))
                    }
                    ("HashMap" | "BTreeMap", [key, value]) => {
                        format!("Record<{}, {}>", self.ts(key), self.ts(value))
                    }
                    ("Box" | "Arc", [inner]) => self.ts(inner),
                    // chrono's times cross as RFC 3339 strings, as ts-rs writes them.
                    ("DateTime", [_]) => "string".to_owned(),
                    (_, []) => self.binding(&name),
                    _ => self.fail(&format!("no TypeScript for `{name}<…>`")),
                }
            }
            _ => self
                .fail("no TypeScript for a type of this shape (a fn, a trait object, an impl …)"),
        }
    }

    /// A type ts-rs exports: `import type { Name } from './Name'`. Whether the file exists is
    /// checked by `every_named_type_has_a_binding` (ts-rs writes them while this runs).
    fn binding(&mut self, name: &str) -> String {
        self.imports.insert(name.to_owned());
        name.to_owned()
    }

    /// A channel parameter's message type.
    fn channel_message(&mut self, ty: &Type) -> String {
        let name = last_ident(ty);
        if let Some((_, ts, imports)) = CHANNEL_MESSAGES.iter().find(|(rust, ..)| *rust == name) {
            for import in *imports {
                self.binding(import);
            }
            return (*ts).to_owned();
        }
        self.ts(ty)
    }
}

fn array_of(item: &str) -> String {
    if item.contains('|') || item.contains("=>") {
        format!("({item})[]")
    } else {
        format!("{item}[]")
    }
}

fn last_ident(ty: &Type) -> String {
    match ty {
        Type::Path(path) => path
            .path
            .segments
            .last()
            .map(|segment| segment.ident.to_string())
            .unwrap_or_default(),
        Type::Reference(reference) => last_ident(&reference.elem),
        _ => String::new(),
    }
}

fn generic_types(arguments: &PathArguments) -> Vec<&Type> {
    match arguments {
        PathArguments::AngleBracketed(angle) => angle
            .args
            .iter()
            .filter_map(|arg| match arg {
                GenericArgument::Type(ty) => Some(ty),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// `provider_id` → `providerId`, as Tauri turns argument names into invoke keys.
pub(crate) fn camel(snake: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for ch in snake.chars() {
        if ch == '_' {
            upper = !out.is_empty();
        } else if upper {
            out.extend(ch.to_uppercase());
            upper = false;
        } else {
            out.push(ch);
        }
    }
    out
}

fn commands_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/commands")
}

/// The `#[tauri::command]` fn `name` in `src/commands/<area>.rs`, read into a `Call`.
fn read_call(area: &str, name: &str) -> Call {
    let file = commands_dir().join(format!("{area}.rs"));
    let text =
        std::fs::read_to_string(&file).unwrap_or_else(|err| panic!("{}: {err}", file.display()));
    let parsed = syn::parse_file(&text).unwrap_or_else(|err| panic!("{}: {err}", file.display()));
    let item = parsed
        .items
        .iter()
        .find_map(|item| match item {
            syn::Item::Fn(item) if item.sig.ident == name => Some(item),
            _ => None,
        })
        .unwrap_or_else(|| {
            panic!(
                "command `{name}` is registered as {area}::{name}, but src/commands/{area}.rs has no fn {name}"
            )
        });
    let attribute = item
        .attrs
        .iter()
        .find(|attr| {
            let path: Vec<_> = attr
                .path()
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            path == ["tauri", "command"] || path == ["command"]
        })
        .unwrap_or_else(|| panic!("fn {area}::{name} has no #[tauri::command]"));
    if let syn::Meta::List(list) = &attribute.meta {
        assert!(
            !list.tokens.to_string().contains("rename_all"),
            "command `{name}` uses rename_all: teach src-tauri/src/typed_calls.rs its keys"
        );
    }

    let mut mapper = Mapper {
        command: name,
        imports: BTreeSet::new(),
    };
    let mut params = Vec::new();
    for input in &item.sig.inputs {
        let FnArg::Typed(typed) = input else {
            mapper.fail("a command cannot take `self`")
        };
        let type_name = last_ident(&typed.ty);
        if INJECTED.contains(&type_name.as_str()) {
            continue;
        }
        let Pat::Ident(ident) = typed.pat.as_ref() else {
            mapper.fail("a parameter that is not a plain name")
        };
        let key = camel(ident.ident.to_string().trim_start_matches("r#"));
        if type_name == "Channel" {
            let Type::Path(path) = typed.ty.as_ref() else {
                unreachable!()
            };
            let segment = path.path.segments.last().expect("a segment");
            let [message] = generic_types(&segment.arguments)[..] else {
                mapper.fail("a Channel without its message type")
            };
            let message = mapper.channel_message(message);
            params.push((key, message, true));
        } else {
            let ts = mapper.ts(&typed.ty);
            params.push((key, ts, false));
        }
    }
    let answer = match &item.sig.output {
        ReturnType::Default => "void".to_owned(),
        ReturnType::Type(_, ty) => {
            let result = match ty.as_ref() {
                Type::Path(path) => path.path.segments.last().filter(|s| s.ident == "Result"),
                _ => None,
            };
            match result.map(|segment| generic_types(&segment.arguments)) {
                Some(args) => match args.as_slice() {
                    [ok, error] if last_ident(error) == "ApiError" => mapper.ts(ok),
                    _ => mapper.fail("a Result whose error is not ApiError"),
                },
                None => mapper.ts(ty),
            }
        }
    };
    let doc = item
        .attrs
        .iter()
        .filter_map(|attr| match &attr.meta {
            syn::Meta::NameValue(pair) if pair.path.is_ident("doc") => match &pair.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(text),
                    ..
                }) => Some(text.value().trim().replace("*/", "* /")),
                _ => None,
            },
            _ => None,
        })
        .collect();
    Call {
        name: name.to_owned(),
        area: area.to_owned(),
        params,
        answer,
        doc,
        imports: mapper.imports,
    }
}

/// Every registered command, in the order of `app_commands!`.
fn calls() -> Vec<Call> {
    COMMAND_AREAS
        .iter()
        .map(|(area, name)| read_call(area, name))
        .collect()
}

/// The bindings folder (`TS_RS_EXPORT_DIR`, ui/src/lib/bindings).
fn bindings_dir() -> PathBuf {
    PathBuf::from(std::env::var("TS_RS_EXPORT_DIR").expect("set in .cargo/config.toml"))
}

/// The whole of `calls.ts`.
fn calls_ts(calls: &[Call]) -> String {
    let imports: BTreeSet<&String> = calls.iter().flat_map(|call| &call.imports).collect();
    let any_channel = calls.iter().any(|call| call.params.iter().any(|p| p.2));

    let mut out = String::from(
        "// Generated from the Tauri commands' Rust signatures (src-tauri/src/commands/*.rs, \
         registered in\n// src-tauri/src/lib.rs) by `make bindings` (src-tauri/src/typed_calls.rs). \
         Do not edit.\n// Each function calls one command through `call` (errors arrive as \
         `BackendError`); its argument's\n// fields are the command's parameters in camelCase, \
         as Tauri names them.\n",
    );
    if any_channel {
        out.push_str("import { Channel } from '@tauri-apps/api/core'\n");
    }
    out.push_str("import { call } from '../backend/ipc'\n");
    for name in &imports {
        let _ = writeln!(out, "import type {{ {name} }} from './{name}'");
    }
    for call in calls {
        let function = camel(&call.name);
        let place = format!(
            "`{}` in src-tauri/src/commands/{}.rs.",
            call.name, call.area
        );
        if call.doc.is_empty() {
            let _ = write!(out, "\n/** {place} */\nexport function {function}(");
        } else {
            let _ = writeln!(out, "\n/**");
            for line in &call.doc {
                let _ = writeln!(out, " *{}{line}", if line.is_empty() { "" } else { " " });
            }
            let _ = write!(out, " *\n * {place}\n */\nexport function {function}(");
        }
        if !call.params.is_empty() {
            out.push_str("args: { ");
            let fields: Vec<String> = call
                .params
                .iter()
                .map(|(key, ts, channel)| {
                    if *channel {
                        format!("{key}: (message: {ts}) => void")
                    } else {
                        format!("{key}: {ts}")
                    }
                })
                .collect();
            out.push_str(&fields.join("; "));
            out.push_str(" }");
        }
        let _ = writeln!(out, "): Promise<{}> {{", call.answer);
        let channels: Vec<String> = call
            .params
            .iter()
            .filter(|(_, _, channel)| *channel)
            .map(|(key, ts, _)| format!("{key}: new Channel<{ts}>(args.{key})"))
            .collect();
        let args = if call.params.is_empty() {
            String::new()
        } else if channels.is_empty() {
            ", args".to_owned()
        } else {
            format!(", {{ ...args, {} }}", channels.join(", "))
        };
        let _ = writeln!(
            out,
            "  return call<{}>('{}'{args})\n}}",
            call.answer, call.name
        );
    }
    out
}

/// Runs with `make bindings` after ts-rs wrote the types (it reads them: each named type must
/// have its file). Named `export_bindings_*` so `cargo test export_bindings` runs it.
#[test]
fn export_bindings_typed_calls() {
    let dir = bindings_dir();
    std::fs::create_dir_all(&dir).expect("bindings folder");
    std::fs::write(dir.join("calls.ts"), calls_ts(&calls())).expect("writes calls.ts");
}

/// A named type in a command's signature needs its ts-rs file, or `calls.ts` imports nothing.
/// Reads the committed bindings, so it runs after `make bindings`, not inside it.
#[test]
fn every_named_type_has_a_binding() {
    let dir = bindings_dir();
    let missing: Vec<String> = calls()
        .iter()
        .flat_map(|call| {
            call.imports
                .iter()
                .filter(|name| !dir.join(format!("{name}.ts")).is_file())
                .map(|name| format!("`{}` names `{name}`", call.name))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "types without a TypeScript binding in ui/src/lib/bindings: {missing:?}. Derive \
         `ts_rs::TS` with `#[ts(export)]` on each, then `make bindings`"
    );
}

#[test]
fn keys_are_camel_case_like_tauri() {
    assert_eq!(camel("provider_id"), "providerId");
    assert_eq!(camel("on_step"), "onStep");
    assert_eq!(camel("instance"), "instance");
    assert_eq!(camel("keeper_keep_alive_quote"), "keeperKeepAliveQuote");
}
