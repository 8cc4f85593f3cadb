// Builds the package: ES modules into dist/esm and CommonJS into dist/cjs
// (each with its .d.ts), so `import` and `require` both work through the
// "exports" map of package.json. dist/cjs gets a package.json of its own
// saying "commonjs", because the package itself is "type": "module".
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
rmSync("dist", { recursive: true, force: true });
for (const project of ["tsconfig.build.json", "tsconfig.cjs.json"]) {
  execFileSync(process.execPath, [tsc, "-p", project], { stdio: "inherit" });
}
mkdirSync("dist/cjs", { recursive: true });
writeFileSync("dist/cjs/package.json", JSON.stringify({ type: "commonjs" }) + "\n");
