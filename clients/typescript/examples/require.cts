// The same package from CommonJS (require), compiled with tsc --strict in the
// scratch project of pack_test.go.
import lq = require("@linkqr/client");

async function main(): Promise<void> {
  const client = new lq.LinkqrClient({ baseUrl: process.env.LINKQR_BASE_URL ?? "", token: process.env.LINKQR_TOKEN ?? "" });
  const ws = await client.workspace();
  console.log(JSON.stringify({ version: lq.VERSION, workspace: ws.object, problemError: typeof lq.ProblemError }));
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
