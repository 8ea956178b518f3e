// TypeScript/JavaScript ground truth for call resolution, produced by the
// TypeScript language service.
//
// Why: knoxidx resolves calls statically and cheaply; to measure how often it
// is right we need a resolver that really type-checks.  "Go to definition" of
// the TypeScript language service (what editors use) is that oracle.
//
// Usage (normally driven by ts_oracle.py, which installs `typescript` and
// caches results):
//
//   node ts_oracle.mjs --corpus DIR --files LIST.txt --out OUT.jsonl [--ts-dir DIR] [--explain]
//
// The program contains every .ts/.tsx/.js/.jsx/.mts/.cts/.mjs/.cjs file of the
// corpus; only the repo-relative paths listed in LIST.txt (one per line) are
// examined.  For each examined file it writes JSONL rows:
//
//   {"kind":"call",   path, line, col, name, target_path, target_line, target_name, target_form}
//       one per (call or `new` site, in-corpus function/method/class target);
//       asked with getDefinitionAtPosition at the callee's name
//       (`c` in `a.b.c()`, `X` in `new ns.X()`); a constructor maps to its class.
//   {"kind":"extends", ...same fields}   for `class A extends B` (B's class)
//   {"kind":"def",    path, line, col, name, def_type, form}
//       every function/method/class declaration (plus function- or
//       class-valued variables/properties, see FORMS below)
//   {"kind":"file",   path, sites, resolved, errors}   (last row of each file)
//
// line is 1-based, col 0-based in UTF-16 code units (TypeScript's unit);
// target_line is the line of the target declaration's *name*.

import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const { values: args } = parseArgs({
  options: {
    corpus: { type: "string" },
    files: { type: "string" },
    out: { type: "string" },
    "ts-dir": { type: "string", default: path.join(HERE, "..", ".cache", "ts-oracle") },
    // Diagnostics: also write {"kind":"miss"} rows for sites with no kept target,
    // listing what the service did return (file and ScriptElementKind).
    explain: { type: "boolean", default: false },
  },
});
if (!args.corpus || !args.files || !args.out) {
  console.error("usage: node ts_oracle.mjs --corpus DIR --files LIST.txt --out OUT.jsonl [--ts-dir DIR]");
  process.exit(2);
}
const ts = createRequire(path.join(path.resolve(args["ts-dir"]), "package.json"))("typescript");

const ROOT = fs.realpathSync(path.resolve(args.corpus));
const SOURCE_EXTS = [".ts", ".tsx", ".js", ".jsx", ".mts", ".cts", ".mjs", ".cjs"];
const SKIP_DIRS = new Set([".git", "node_modules"]);

// ------------------------------------------------------------------ program

function listSources(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) out.push(...listSources(full));
    } else if (SOURCE_EXTS.some((ext) => entry.name.endsWith(ext))) {
      out.push(full);
    }
  }
  return out.sort();
}

const OPTIONS = {
  allowJs: true,
  checkJs: false,
  jsx: ts.JsxEmit.Preserve,
  target: ts.ScriptTarget.ESNext,
  module: ts.ModuleKind.ESNext,
  // Bundler resolution: extensionless imports and `./x.js` -> `./x.ts` both work.
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  allowImportingTsExtensions: true,
  resolveJsonModule: true,
  esModuleInterop: true,
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  types: [], // never pull in @types/* from outside the corpus
};

const allFiles = listSources(ROOT);
const snapshots = new Map();
const host = {
  getScriptFileNames: () => allFiles,
  getScriptVersion: () => "1",
  getScriptSnapshot: (fileName) => {
    if (!snapshots.has(fileName)) {
      snapshots.set(fileName, fs.existsSync(fileName) ? ts.ScriptSnapshot.fromString(fs.readFileSync(fileName, "utf8")) : undefined);
    }
    return snapshots.get(fileName);
  },
  getCurrentDirectory: () => ROOT,
  getCompilationSettings: () => OPTIONS,
  getDefaultLibFileName: (options) => ts.getDefaultLibFilePath(options),
  fileExists: ts.sys.fileExists,
  readFile: ts.sys.readFile,
  readDirectory: ts.sys.readDirectory,
  directoryExists: ts.sys.directoryExists,
  getDirectories: ts.sys.getDirectories,
  realpath: ts.sys.realpath,
};
const started = Date.now();
const service = ts.createLanguageService(host, ts.createDocumentRegistry());
const program = service.getProgram();
const checker = program.getTypeChecker();

function corpusRelative(fileName) {
  const rel = path.relative(ROOT, fileName);
  if (!rel || rel.startsWith("..") || path.isAbsolute(rel) || rel.split(path.sep).includes("node_modules")) return null;
  return rel.split(path.sep).join("/");
}

// ------------------------------------------------------------------ declarations

function skipWrappers(expr) {
  // `(x)`, `x as T`, `x satisfies T`, `<T>x`, `x!`
  while (expr && (ts.isParenthesizedExpression(expr) || ts.isAsExpression(expr) || ts.isSatisfiesExpression(expr)
    || ts.isTypeAssertionExpression(expr) || ts.isNonNullExpression(expr))) {
    expr = expr.expression;
  }
  return expr;
}

function isFunctionValue(expr) {
  expr = skipWrappers(expr);
  return !!expr && (ts.isArrowFunction(expr) || ts.isFunctionExpression(expr));
}

function isClassValue(expr) {
  expr = skipWrappers(expr);
  return !!expr && ts.isClassExpression(expr);
}

// The variable/property/assignment a function or class expression is the value of.
function holderOf(expr) {
  let node = expr;
  while (node.parent && (ts.isParenthesizedExpression(node.parent) || ts.isAsExpression(node.parent)
    || ts.isSatisfiesExpression(node.parent) || ts.isTypeAssertionExpression(node.parent))) {
    node = node.parent;
  }
  const parent = node.parent;
  if (!parent) return null;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    && parent.initializer === node) return parent;
  if (ts.isBinaryExpression(parent) && parent.right === node) return parent;
  return null;
}

// The implementation of an overloaded function/method: go-to-definition may
// land on a body-less overload signature, knoxidx has one node per
// implementation.
function implementationOf(decl) {
  if (decl.body || !decl.name) return decl;
  const symbol = checker.getSymbolAtLocation(decl.name);
  const impl = symbol?.declarations?.find((d) => d.kind === decl.kind && d.body);
  return impl ?? decl;
}

// FORMS: how a callable definition is written.
//   function-declaration, method, class, function-variable (const f = () => ..),
//   class-variable (const C = class ..), function-property ({ f: () => .. } or
//   class field `f = () => ..`), function-assignment (JS: exports.f = function ..)
//
// Returns { decl, nameNode, defType, form } for a declaration node (decl may
// be another node: the implementation of an overload, the class of a
// constructor, the variable holding a function expression), or null when the
// node is not a callable definition.
function describeDefinition(node) {
  if (ts.isFunctionExpression(node) || ts.isClassExpression(node)) {
    // `const f = function g() {}`: the definition is `f`, as an indexer sees it.
    const held = holderOf(node) && describeDefinition(holderOf(node));
    if (held || !node.name) return held;
  }
  if (ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node)) {
    if (!node.name) return null;
    const impl = implementationOf(node);
    return { decl: impl, nameNode: impl.name, defType: "function", form: "function-declaration" };
  }
  if (ts.isMethodDeclaration(node)) {
    const impl = implementationOf(node);
    return { decl: impl, nameNode: impl.name, defType: "method", form: "method" };
  }
  if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) {
    return node.name ? { decl: node, nameNode: node.name, defType: "class", form: "class" } : null;
  }
  if (ts.isConstructorDeclaration(node)) {
    return describeDefinition(node.parent); // `new X()` means the class
  }
  if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name)) {
    if (isFunctionValue(node.initializer)) return { decl: node, nameNode: node.name, defType: "function", form: "function-variable" };
    if (isClassValue(node.initializer)) return { decl: node, nameNode: node.name, defType: "class", form: "class-variable" };
    return null;
  }
  if ((ts.isPropertyAssignment(node) || ts.isPropertyDeclaration(node)) && isFunctionValue(node.initializer)) {
    return { decl: node, nameNode: node.name, defType: "method", form: "function-property" };
  }
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken
    && ts.isPropertyAccessExpression(node.left) && isFunctionValue(node.right)) {
    return { decl: node, nameNode: node.left.name, defType: "function", form: "function-assignment" };
  }
  return null;
}

// The deepest node whose span covers `pos` (tokens included).
function nodeAt(sourceFile, pos) {
  let node = sourceFile;
  for (;;) {
    const child = node.getChildren(sourceFile).find((c) => c.getStart(sourceFile) <= pos && pos < c.end);
    if (!child) return node;
    node = child;
  }
}

// Map one DefinitionInfo to a callable definition inside the corpus.
function definitionTarget(info) {
  if (corpusRelative(info.fileName) === null) return null;
  const sourceFile = program.getSourceFile(info.fileName);
  if (!sourceFile) return null;
  // The definition span is the declaration's name (or the `constructor`
  // keyword): climb off the name -- through `a.b` of `a.b = function` -- to the
  // node that may describe a definition.
  let node = nodeAt(sourceFile, info.textSpan.start);
  while (node && (ts.isIdentifier(node) || ts.isPrivateIdentifier(node) || ts.isPropertyAccessExpression(node)
    || node.kind === ts.SyntaxKind.ConstructorKeyword)) {
    node = node.parent;
  }
  const found = node && describeDefinition(node);
  if (!found) return null;
  const nameFile = found.decl.getSourceFile();
  const namePath = corpusRelative(nameFile.fileName);
  if (namePath === null) return null;
  const line = nameFile.getLineAndCharacterOfPosition(found.nameNode.getStart(nameFile)).line + 1;
  return { target_path: namePath, target_line: line, target_name: found.nameNode.getText(nameFile), target_form: found.form };
}

// ------------------------------------------------------------------ sites

function calleeName(expr) {
  expr = expr && ts.isNonNullExpression(expr) ? expr.expression : expr;
  if (!expr) return null;
  if (ts.isIdentifier(expr) || expr.kind === ts.SyntaxKind.SuperKeyword) return expr;
  if (ts.isPropertyAccessExpression(expr)) return expr.name;
  return null; // element access, calls of calls, IIFEs: no name to ask about
}

function examine(rel) {
  const fileName = path.join(ROOT, rel);
  const sourceFile = program.getSourceFile(fileName);
  const rows = [];
  // Written *last*: the driver treats a file as done only once its file row arrived.
  const fileRow = { kind: "file", path: rel, sites: 0, resolved: 0, errors: 0 };
  if (!sourceFile) {
    fileRow.errors += 1;
    return [fileRow];
  }
  const position = (node) => {
    const { line, character } = sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile));
    return { line: line + 1, col: character };
  };

  const ask = (kind, nameNode) => {
    fileRow.sites += 1;
    let infos;
    try {
      infos = service.getDefinitionAtPosition(fileName, nameNode.getStart(sourceFile)) ?? [];
    } catch (err) {
      fileRow.errors += 1;
      return;
    }
    const seen = new Set();
    for (const info of infos) {
      const target = definitionTarget(info);
      if (!target || (kind === "extends" && !target.target_form.startsWith("class"))) continue;
      const key = `${target.target_path}:${target.target_line}`;
      if (seen.has(key)) continue;
      seen.add(key);
      rows.push({ kind, path: rel, ...position(nameNode), name: nameNode.getText(sourceFile), ...target });
    }
    if (seen.size) fileRow.resolved += 1;
    else if (args.explain) {
      const got = infos.map((i) => ({ file: corpusRelative(i.fileName) ?? path.basename(i.fileName), kind: i.kind }));
      rows.push({ kind: "miss", site: kind, path: rel, ...position(nameNode), name: nameNode.getText(sourceFile), got });
    }
  };

  const visit = (node) => {
    if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
      const name = calleeName(node.expression);
      if (name) ask("call", name);
    } else if ((ts.isClassDeclaration(node) || ts.isClassExpression(node)) && node.heritageClauses) {
      for (const clause of node.heritageClauses) {
        if (clause.token !== ts.SyntaxKind.ExtendsKeyword) continue;
        for (const t of clause.types) {
          const name = calleeName(t.expression);
          if (name) ask("extends", name);
        }
      }
    }
    // A definition row only where the node *is* the definition: overload
    // signatures and constructors describe another node (the implementation,
    // the class) and would count it twice.
    const def = describeDefinition(node);
    if (def && def.decl === node) {
      rows.push({ kind: "def", path: rel, ...position(def.nameNode), name: def.nameNode.getText(sourceFile), def_type: def.defType, form: def.form });
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  rows.push(fileRow);
  return rows;
}

// ------------------------------------------------------------------ main

const built = Date.now();
const wanted = fs.readFileSync(args.files, "utf8").split("\n").map((s) => s.trim()).filter(Boolean);
const out = fs.openSync(args.out, "w");
for (const rel of wanted) {
  const rows = examine(rel);
  fs.writeSync(out, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
}
fs.closeSync(out);
console.error(`[ts_oracle] ${allFiles.length} files in program (built in ${((built - started) / 1000).toFixed(1)}s), `
  + `examined ${wanted.length} in ${((Date.now() - built) / 1000).toFixed(1)}s`);
