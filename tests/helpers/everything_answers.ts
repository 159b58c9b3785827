/**
 * What the test clients answer when the everything server asks for input,
 * shared by the SDK v1 and v2 interop tests, the texts those answers
 * produce, and a bounded wait for notifications.
 *
 * @module
 */

/** Root the clients report. */
export const ROOTS = { roots: [{ uri: "file:///test/root", name: "Test Root" }] };

/** The sampled message the clients return. */
export const SAMPLED = {
  role: "assistant",
  content: { type: "text", text: "Paris" },
  model: "test-model",
  stopReason: "endTurn",
};

/** The message of `test_elicitation` in the tests. */
export const ELICITATION_MESSAGE = "Do you agree?";

/** The values of an accepted elicitation. */
type Content = Record<string, string | number | boolean | string[]>;

const CONTENT_BY_MESSAGE: Record<string, Content> = {
  "What is your name?": { name: "Alice" },
  "What is your favourite colour?": { color: "blue" },
  "Please confirm": { ok: true },
  "Continue?": { ok: true },
  "What context should the prompt use?": { context: "testing" },
  [ELICITATION_MESSAGE]: { username: "yes", email: "yes@example.com" },
  "Please review and update the form fields with defaults": {
    name: "John Doe",
    age: 30,
    score: 95.5,
    status: "active",
    verified: true,
  },
  "Please select options from the enum fields": {
    untitledSingle: "option1",
    titledSingle: "value2",
    legacyEnum: "opt3",
    untitledMulti: ["option1", "option2"],
    titledMulti: ["value1"],
  },
};

/**
 * Answers an elicitation by its message.
 *
 * @param message The elicitation's message.
 * @returns An accepted answer.
 * @throws {Error} For a message the tests do not know.
 */
export function answerElicitation(message: string): { action: "accept"; content: Content } {
  const content = CONTENT_BY_MESSAGE[message];
  if (!content) throw new Error(`Unexpected elicitation: ${message}`);
  return { action: "accept", content: structuredClone(content) };
}

/** The text each interactive tool returns, given the answers above. */
export const INTERACTIVE_TEXT: Record<string, string> = {
  test_missing_capability: "Sampled: Paris",
  test_streaming_elicitation: "Elicitation answered: accept",
  test_input_required_result_elicitation: "Hello, Alice!",
  test_input_required_result_sampling: "Sampling result: Paris",
  test_input_required_result_list_roots: "Roots: file:///test/root",
  test_input_required_result_request_state: "state-ok: confirmed=true",
  test_input_required_result_multiple_inputs: "name=Alice, sample=Paris, roots=file:///test/root",
  test_input_required_result_multi_round: "Alice likes blue",
  test_input_required_result_tampered_state: "Hello, Alice!",
  test_input_required_result_capabilities: "name=Alice, sample=Paris, roots=file:///test/root",
};

/** The tools of the everything server, in listing order. */
export const TOOL_NAMES = [
  "test_simple_text",
  "test_image_content",
  "test_audio_content",
  "test_embedded_resource",
  "test_multiple_content_types",
  "test_error_handling",
  "test_tool_with_progress",
  "test_tool_with_logging",
  "json_schema_2020_12_tool",
  "test_slow_operation",
  "test_sampling",
  "test_elicitation",
  "test_elicitation_sep1034_defaults",
  "test_elicitation_sep1330_enums",
  "test_missing_capability",
  "test_streaming_elicitation",
  "test_reconnection",
  "test_logging_tool",
  "test_trigger_tool_change",
  "test_trigger_prompt_change",
  "test_input_required_result_elicitation",
  "test_input_required_result_sampling",
  "test_input_required_result_list_roots",
  "test_input_required_result_request_state",
  "test_input_required_result_multiple_inputs",
  "test_input_required_result_multi_round",
  "test_input_required_result_tampered_state",
  "test_input_required_result_capabilities",
  "test_x_mcp_header",
  "test_trigger_resource_update",
  "greet",
  "slow_compute",
  "failing_job",
  "protocol_error_job",
  "confirm_delete",
  "multi_input",
  "test_tool_with_task",
];

/** The PNG every image content carries. */
export const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/** Exact results of the tools that need no input, by name. */
export const STATIC_RESULTS: Record<string, unknown> = {
  test_simple_text: {
    content: [{ type: "text", text: "This is a simple text response for testing." }],
  },
  test_image_content: { content: [{ type: "image", data: PNG, mimeType: "image/png" }] },
  test_audio_content: {
    content: [{
      type: "audio",
      data: "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=",
      mimeType: "audio/wav",
    }],
  },
  test_embedded_resource: {
    content: [{
      type: "resource",
      resource: {
        uri: "test://embedded-resource",
        mimeType: "text/plain",
        text: "This is an embedded resource content.",
      },
    }],
  },
  test_multiple_content_types: {
    content: [
      { type: "text", text: "Multiple content types test:" },
      { type: "image", data: PNG, mimeType: "image/png" },
      {
        type: "resource",
        resource: {
          uri: "test://mixed-content-resource",
          mimeType: "application/json",
          text: '{"test":"data","value":123}',
        },
      },
    ],
  },
  test_error_handling: {
    content: [{ type: "text", text: "This tool intentionally returns an error for testing" }],
    isError: true,
  },
};

/** Exact `resources/read` contents by URI (the watched resource at its first revision). */
export const RESOURCE_CONTENTS: Record<string, unknown[]> = {
  "test://static-text": [{
    uri: "test://static-text",
    mimeType: "text/plain",
    text: "This is the content of the static text resource.",
  }],
  "test://static-binary": [{ uri: "test://static-binary", mimeType: "image/png", blob: PNG }],
  "test://watched-resource": [{
    uri: "test://watched-resource",
    mimeType: "text/plain",
    text: "Watched resource content",
  }],
  "test://template/123/data": [{
    uri: "test://template/123/data",
    mimeType: "application/json",
    text: '{"id":"123","templateTest":true,"data":"Data for ID: 123"}',
  }],
};

/** Exact prompt messages by prompt name, for the arguments in `PROMPT_ARGUMENTS`. */
export const PROMPT_MESSAGES: Record<string, unknown[]> = {
  test_simple_prompt: [{
    role: "user",
    content: { type: "text", text: "This is a simple prompt for testing." },
  }],
  test_prompt_with_arguments: [{
    role: "user",
    content: { type: "text", text: "Prompt with arguments: arg1='testValue1', arg2='testValue2'" },
  }],
  test_prompt_with_embedded_resource: [
    {
      role: "user",
      content: {
        type: "resource",
        resource: {
          uri: "test://static-text",
          mimeType: "text/plain",
          text: "Embedded resource content for testing.",
        },
      },
    },
    {
      role: "user",
      content: { type: "text", text: "Please process the embedded resource above." },
    },
  ],
  test_prompt_with_image: [
    { role: "user", content: { type: "image", data: PNG, mimeType: "image/png" } },
    { role: "user", content: { type: "text", text: "Please analyze the image above." } },
  ],
  test_input_required_result_prompt: [{
    role: "user",
    content: { type: "text", text: "Context: testing" },
  }],
};

/** The arguments each prompt is got with. */
export const PROMPT_ARGUMENTS: Record<string, Record<string, string>> = {
  test_prompt_with_arguments: { arg1: "testValue1", arg2: "testValue2" },
  test_prompt_with_embedded_resource: { resourceUri: "test://static-text" },
};

/** Text of the single text block of a tool result. */
export function textOf(result: { content?: unknown }): string {
  const content = result.content as { type: string; text?: string }[];
  if (content?.length !== 1 || content[0].type !== "text") {
    throw new Error(`Not one text block: ${JSON.stringify(result)}`);
  }
  return content[0].text!;
}

/**
 * Waits until `predicate` holds, polling the event loop; gives up with an
 * error after `limitMs` so a missing message fails the test instead of
 * hanging it.
 *
 * @param predicate What to wait for.
 * @param limitMs How long to wait at most.
 */
export async function until(predicate: () => boolean, limitMs = 10_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`still waiting after ${limitMs} ms: ${predicate}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
