import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import { fileUrlOf, loadServer } from "./_load_server.ts";

Deno.test("fileUrlOf: POSIX paths give what node:url's pathToFileURL gives", () => {
  const cwd = "/srv/my app";
  for (
    const path of [
      "server.ts",
      "./examples/hello.ts",
      "../up/one.ts",
      "/abs/path/x.ts",
      "odd name #1?.ts",
      "100%.ts",
      "ünïcode/日本.ts",
    ]
  ) {
    const expected = pathToFileURL(path.startsWith("/") ? path : `${cwd}/${path}`).href;
    assert.equal(fileUrlOf(path, cwd).href, expected, path);
  }
});

Deno.test("fileUrlOf: Windows drive, backslash and UNC paths", () => {
  assert.equal(fileUrlOf("C:\\app\\server.ts", "D:\\work").href, "file:///C:/app/server.ts");
  assert.equal(fileUrlOf("src\\server.ts", "D:\\work").href, "file:///D:/work/src/server.ts");
  assert.equal(fileUrlOf("..\\x.ts", "D:\\work\\").href, "file:///D:/x.ts");
  assert.equal(fileUrlOf("\\\\host\\share\\x.ts", "D:\\").href, "file://host/share/x.ts");
  assert.equal(fileUrlOf("x.ts", "\\\\host\\share").href, "file://host/share/x.ts");
});

Deno.test("loadServer: a missing file and a module without a server say so in one line", async () => {
  await assert.rejects(
    () => loadServer("no/such/server.ts"),
    { message: "server module not found: no/such/server.ts" },
  );
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/not a server #1.ts`, "export default 42;\n");
    await assert.rejects(
      () => loadServer(`${dir}/not a server #1.ts`),
      /not a server|default export/,
    );
    await Deno.writeTextFile(
      `${dir}/plain.ts`,
      'export default { name: "plain", version: "1.0.0" };\n',
    );
    assert.equal((await loadServer(`${dir}/plain.ts`)).info.name, "plain");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
