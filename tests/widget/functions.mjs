// The functions of a JavaScript file, found with TypeScript's parser:
// `node functions.mjs <typescript module> <file>` prints one JSON list of
// {name, line, lines, parameters, wrapper} (tests/widget/typescript.py).
// `wrapper`: the function of a top-level `(() => { ... })();`, the file's
// own scope rather than a function of it.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";

const [typescriptPath, file] = process.argv.slice(2);
const ts = createRequire(import.meta.url)(typescriptPath);
const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
const line = (position) => source.getLineAndCharacterOfPosition(position).line + 1;

const isWrapper = (node) => {
  const parenthesized = node.parent;
  const call = parenthesized && parenthesized.parent;
  const statement = call && call.parent;
  return (
    ts.isParenthesizedExpression(parenthesized) &&
    ts.isCallExpression(call) &&
    call.expression === parenthesized &&
    ts.isExpressionStatement(statement) &&
    statement.parent === source
  );
};

// A function's own name, else the name it is given (`const ask = () => …`).
const nameOf = (node, start) => {
  const named = node.name ? node : node.parent;
  return named && named.name ? named.name.getText(source) : `(anonymous at line ${start})`;
};

const found = [];
const visit = (node) => {
  if (ts.isFunctionLike(node) && "body" in node && node.body) {
    const start = line(node.getStart(source));
    found.push({
      name: nameOf(node, start),
      line: start,
      lines: line(node.end) - start + 1,
      parameters: node.parameters.length,
      wrapper: isWrapper(node),
    });
  }
  ts.forEachChild(node, visit);
};
visit(source);
console.log(JSON.stringify(found));
