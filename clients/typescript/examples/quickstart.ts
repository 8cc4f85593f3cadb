// An integrator's first program against linkqr, as an ES module: the packed
// package is installed into a scratch project and this file is compiled
// with tsc --strict and run against a live server (typescript_test.go).
// Run it yourself with LINKQR_BASE_URL and LINKQR_TOKEN set.
import { LinkqrClient, ProblemError, VERSION, type Link } from "@linkqr/client";

const lq = new LinkqrClient({
  baseUrl: process.env.LINKQR_BASE_URL ?? "http://127.0.0.1:8080",
  token: process.env.LINKQR_TOKEN ?? "",
});

const link: Link = await lq.createLink(
  { target_url: "https://example.com/menu", title: "Spring menu" },
  { idempotencyKey: `quickstart-${Date.now()}` },
);
await lq.updateLink(link.id, { target_url: "https://example.com/summer" });

let listed = 0;
for await (const l of lq.links({ limit: 100 })) if (l.id === link.id) listed++;

try {
  await lq.createLink({ target_url: "ftp://example.com" });
  throw new Error("an ftp target was accepted");
} catch (e) {
  if (!(e instanceof ProblemError)) throw e;
  console.log(JSON.stringify({ version: VERSION, code: link.code, listed, refused: e.slug, pointer: e.errors[0]?.pointer }));
}
