// The TypeScript compiler's function-like declarations, for bench/signatures.py: for each file
// named on stdin (one path a line), one JSON line per function, method, constructor, accessor,
// method or function signature, and function or arrow function assigned to a variable or a
// class property:
// {file, line (1-based, of its name), name, parameters: [{name, type, default, optional, rest}],
// returns, typeParameters}; texts as written, each run of whitespace one space.
// Usage: node ts_signatures.mjs PATH_TO_TYPESCRIPT_PACKAGE < files
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";

const require = createRequire(import.meta.url);
const ts = require(process.argv[2]);
const files = readFileSync(0, "utf8").split("\n").filter(Boolean);
const text = (node, sf) => (node ? node.getText(sf).split(/\s+/).join(" ").trim() : null);

function emit(file, sf, name, decl) {
  const line = sf.getLineAndCharacterOfPosition(name.getStart(sf)).line + 1;
  process.stdout.write(JSON.stringify({
    file, line, name: name.getText(sf),
    parameters: decl.parameters.map((p) => ({
      name: text(p.name, sf), type: text(p.type, sf), default: text(p.initializer, sf),
      optional: !!p.questionToken, rest: !!p.dotDotDotToken,
    })),
    returns: text(decl.type, sf),
    typeParameters: (decl.typeParameters || []).map((t) => text(t, sf)),
  }) + "\n");
}

for (const file of files) {
  const kind = file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true, kind);
  const visit = (node) => {
    if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) ||
         ts.isMethodSignature(node) || ts.isGetAccessorDeclaration(node) ||
         ts.isSetAccessorDeclaration(node)) && node.name) {
      emit(file, sf, node.name, node);
    } else if (ts.isConstructorDeclaration(node)) {
      const keyword = node.getChildren(sf).find((c) => c.kind === ts.SyntaxKind.ConstructorKeyword);
      if (keyword) emit(file, sf, keyword, node);
    } else if ((ts.isVariableDeclaration(node) || ts.isPropertyDeclaration(node)) &&
               node.initializer && (ts.isIdentifier(node.name) || ts.isPrivateIdentifier(node.name)) &&
               (ts.isArrowFunction(node.initializer) || ts.isFunctionExpression(node.initializer))) {
      emit(file, sf, node.name, node.initializer);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}
