// The official `openai` Node SDK (pinned in package-lock.json) as a strict client of `k3lab mock-server`:
// every response must parse with the SDK, and every rejection must surface as the SDK's error class
// with OpenAI's error type, code and param. Usage: node strict_client.mjs <path to the k3lab binary>.
// Exits 1 at the first failed check, naming it; run by ctest through run_strict_client.sh.
import {spawn} from "node:child_process";
import {createInterface} from "node:readline";
import {isDeepStrictEqual} from "node:util";

const k3labBinary = process.argv[2];
if (!k3labBinary) {
  console.error("usage: node strict_client.mjs <path to the k3lab binary>");
  process.exit(2);
}

const {default: OpenAI} = await import("openai");
const {VERSION: sdkVersion} = await import("openai/version");

class CheckFailed extends Error {}

let passed = 0;
function check(condition, what, detail = "") {
  if (!condition) throw new CheckFailed(`${what}${detail ? `: ${detail}` : ""}`);
  passed += 1;
}
const show = (value) => JSON.stringify(value);

// Starts `k3lab mock-server --port 0 ...`; resolves with its base URL once it prints the one it serves.
function startMock(extraArgs, env = process.env) {
  const child = spawn(k3labBinary, ["mock-server", "--port", "0", ...extraArgs], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (piece) => (stderr += piece));
  const exited = new Promise((resolve) => {
    child.on("exit", (code, signal) => resolve({code, signal}));
    child.on("error", (error) => resolve({code: null, signal: null, error}));
  });
  const baseURL = new Promise((resolve, reject) => {
    const timer =
        setTimeout(() => reject(new CheckFailed(`mock-server printed no URL within 30 s; stderr: ${stderr}`)), 30_000);
    createInterface({input: child.stdout}).on("line", (line) => {
      const match = line.match(/serving (http:\/\/127\.0\.0\.1:\d+\/v1)/);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    exited.then(({code, signal, error}) => {
      clearTimeout(timer);
      const how = error ? `could not start (${error.message}; build it: ninja -C build k3lab)` :
                          `exited (code ${code}, signal ${signal})`;
      reject(new CheckFailed(`mock-server ${how} before serving; stderr: ${stderr}`));
    });
  });
  return {baseURL, stop: () => (child.kill("SIGINT"), exited), child};
}

function client(baseURL, apiKey = "sk-k3lab-sdk-test") {
  return new OpenAI({baseURL, apiKey, maxRetries: 0, timeout: 30_000});
}

// Runs `request`, which must be rejected with `ErrorClass`; returns the error for further checks.
async function rejection(what, ErrorClass, request) {
  try {
    const answer = await request();
    throw new CheckFailed(`${what}: expected ${ErrorClass.name}, the server answered ${show(answer).slice(0, 300)}`);
  } catch (error) {
    if (error instanceof CheckFailed) throw error;
    check(
        error instanceof ErrorClass, what,
        `expected ${ErrorClass.name}, got ${error?.constructor?.name}: ${error?.message}`);
    return error;
  }
}

const modelA = "sdk-model-a";
const modelB = "sdk-model-b";
const userTurn = (text) => [{role: "user", content: text}];

async function checkModels(openai) {
  const ids = [];
  for await (const model of openai.models.list()) ids.push(model.id);
  check(isDeepStrictEqual([...ids].sort(), [modelA, modelB]), "models.list lists exactly the served models", show(ids));
  const retrieved = await openai.models.retrieve(modelB);
  check(
      retrieved.id === modelB && retrieved.object === "model", "models.retrieve returns the served model",
      show(retrieved));
  const missing = await rejection(
      "models.retrieve of an unserved id",
      OpenAI.NotFoundError,
      () => openai.models.retrieve("kimi-k3"),
  );
  check(
      missing.status === 404 && missing.code === "model_not_found", "unserved id is 404 model_not_found",
      show(missing.error));
  const chatMissing = await rejection(
      "a chat completion for an unserved model",
      OpenAI.NotFoundError,
      () => openai.chat.completions.create({model: "kimi-k3", messages: userTurn("hello")}),
  );
  check(
      chatMissing.code === "model_not_found", "chat for an unserved model is model_not_found", show(chatMissing.error));
}

function checkUsage(usage, what) {
  check(
      usage && Number.isInteger(usage.prompt_tokens) && usage.prompt_tokens > 0, `${what}: prompt_tokens > 0`,
      show(usage));
  check(
      Number.isInteger(usage.completion_tokens) && usage.completion_tokens > 0, `${what}: completion_tokens > 0`,
      show(usage));
  check(
      usage.total_tokens === usage.prompt_tokens + usage.completion_tokens, `${what}: total = prompt + completion`,
      show(usage));
  const cached = usage.prompt_tokens_details?.cached_tokens;
  check(
      Number.isInteger(cached) && cached >= 0 && cached <= usage.prompt_tokens,
      `${what}: prompt_tokens_details.cached_tokens within [0, prompt_tokens]`, show(usage));
  return cached;
}

// A prompt long enough to fill whole cache blocks, unique to this run so nothing earlier shares its prefix.
const longPrompt = `SDK cache probe ${Date.now()}. ` +
    "A line of filler text that the reader will not answer. ".repeat(120);

async function checkNonStreamed(openai) {
  const request = {model: modelA, messages: userTurn(longPrompt), max_completion_tokens: 256};
  const first = await openai.chat.completions.create(request);
  check(
      first.object === "chat.completion" && first.model === modelA, "a completion names its object and model",
      show(first).slice(0, 300));
  check(first.choices.length === 1, "exactly one choice", String(first.choices.length));
  const [choice] = first.choices;
  check(
      choice.message.role === "assistant" && typeof choice.message.content === "string" &&
          choice.message.content.length > 0,
      "the message is an assistant's text", show(choice.message).slice(0, 300));
  check(["stop", "length"].includes(choice.finish_reason), "finish_reason is stop or length", choice.finish_reason);
  check("logprobs" in choice && choice.logprobs === null, "logprobs is present and null", show(choice.logprobs));
  check(
      checkUsage(first.usage, "first call") === 0, "a prompt never sent before has no cached tokens",
      show(first.usage));
  const second = await openai.chat.completions.create(request);
  const cached = checkUsage(second.usage, "repeated call");
  check(cached > 0, "the identical prompt sent again reports cached_tokens > 0", show(second.usage));
  check(
      second.choices[0].message.content === choice.message.content,
      "the mock answers an identical request identically");
  return {request, reference: first};
}

async function collect(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

async function checkStreamed(openai, {request, reference}) {
  const withUsage = await collect(
      await openai.chat.completions.create({...request, stream: true, stream_options: {include_usage: true}}),
  );
  check(withUsage.length >= 2, "a stream has several chunks", String(withUsage.length));
  check(
      withUsage.every((c) => c.object === "chat.completion.chunk" && c.id === withUsage[0].id),
      "every chunk is a chunk of one completion");
  const last = withUsage[withUsage.length - 1];
  const earlier = withUsage.slice(0, -1);
  check(
      earlier.every((c) => c.usage == null), "with include_usage, no chunk before the last carries top-level usage",
      show(earlier.find((c) => c.usage != null)));
  check(last.choices.length === 0, "the usage chunk has no choices (OpenAI's shape)", show(last.choices));
  checkUsage(last.usage, "streamed usage");
  check(
      last.usage.prompt_tokens === reference.usage.prompt_tokens &&
          last.usage.completion_tokens === reference.usage.completion_tokens,
      "streamed usage counts equal the non-streamed ones", `${show(last.usage)} vs ${show(reference.usage)}`);
  // Labelled Kimi divergence (mock-server --help): the finish chunk's choice repeats usage; never a second count.
  for (const c of earlier) {
    for (const choice of c.choices) {
      if (choice.usage != null) {
        check(
            choice.finish_reason != null && isDeepStrictEqual(choice.usage, last.usage),
            "usage inside a choice appears only on the finish chunk and equals the final usage", show(choice));
      }
    }
  }
  const text = withUsage.flatMap((c) => c.choices.map((choice) => choice.delta?.content ?? "")).join("");
  check(
      text === reference.choices[0].message.content, "streamed content reassembles to the non-streamed content",
      `${show(text).slice(0, 200)} vs ${show(reference.choices[0].message.content).slice(0, 200)}`);
  check(
      withUsage.some((c) => c.choices.some((choice) => choice.finish_reason === reference.choices[0].finish_reason)),
      "the stream carries the same finish_reason");

  const withoutUsage = await collect(await openai.chat.completions.create({...request, stream: true}));
  const usageSeen = withoutUsage.find((c) => c.usage != null || c.choices.some((choice) => choice.usage != null));
  check(usageSeen === undefined, "without include_usage, no chunk carries usage", show(usageSeen));

  const helper =
      await openai.chat.completions.stream({...request, stream_options: {include_usage: true}}).finalChatCompletion();
  check(
      helper.choices[0].message.content === reference.choices[0].message.content,
      "the SDK's stream helper assembles the same content");
}

const accountTool = {
  type: "function",
  function: {
    name: "get_account",
    description: "Look up one account: owner and balance.",
    parameters: {type: "object", properties: {account_id: {type: "string"}}, required: ["account_id"]},
  },
};

// agent-replay's traffic: a request declaring tools goes to the scripted agent, which reads the account
// through the declared tool and answers with the balance the tool result gave it.
async function checkToolRoundTrip(openai) {
  const account = "ACC-4242";
  const balance = "73.15";
  const messages = userTurn(`What is the current balance of account ${account}?`);
  const request = {model: modelA, tools: [accountTool], messages};
  const first = await openai.chat.completions.create(request);
  const [choice] = first.choices;
  check(
      choice.finish_reason === "tool_calls", "a question that needs the tool ends its turn with tool_calls",
      show(choice).slice(0, 300));
  const calls = choice.message.tool_calls ?? [];
  check(
      calls.length === 1 && calls[0].type === "function" && calls[0].function.name === "get_account",
      "the turn calls get_account once", show(calls));
  check(
      JSON.parse(calls[0].function.arguments).account_id === account, "the call's arguments name the account",
      calls[0].function.arguments);

  const streamedTurn = await openai.chat.completions.stream(request).finalChatCompletion();
  const streamedCalls = streamedTurn.choices[0].message.tool_calls ?? [];
  check(
      streamedCalls.length === 1 && streamedCalls[0].id === calls[0].id &&
          streamedCalls[0].function.arguments === calls[0].function.arguments,
      "the streamed turn's tool-call deltas assemble to the same call", show(streamedCalls));

  const toolResult = {
    role: "tool",
    tool_call_id: calls[0].id,
    content: JSON.stringify({account_id: account, balance, balance_cents: 7315})
  };
  const answer =
      await openai.chat.completions.create({...request, messages: [...messages, choice.message, toolResult]});
  check(
      answer.choices[0].finish_reason === "stop", "the turn after the tool result finishes",
      show(answer.choices[0]).slice(0, 300));
  check(
      answer.choices[0].message.content.endsWith(`RESULT: ${balance}`),
      "the answer reports the balance the tool returned", answer.choices[0].message.content);

  // Labelled Kimi divergence: with thinking on, a replayed tool-call turn must keep its reasoning_content.
  const {reasoning_content: _dropped, ...withoutReasoning} = choice.message;
  const replay = await rejection(
      "a tool-call turn replayed without reasoning_content",
      OpenAI.BadRequestError,
      () => openai.chat.completions.create({...request, messages: [...messages, withoutReasoning, toolResult]}),
  );
  check(replay.type === "invalid_request_error", "the replay rule is an invalid_request_error", show(replay.error));
}

async function checkBadRequests(openai) {
  const base = {model: modelA, messages: userTurn("hello"), max_completion_tokens: 32};
  const cases = [
    ["stream", {stream: "yes"}],
    ["max_completion_tokens", {max_completion_tokens: "ten"}],
    ["max_completion_tokens", {max_completion_tokens: -5}],
    ["n", {n: 3}],
    ["tools", {tools: "nope"}],
  ];
  for (const [param, change] of cases) {
    const what = `a request with ${show(change)}`;
    const error =
        await rejection(what, OpenAI.BadRequestError, () => openai.chat.completions.create({...base, ...change}));
    check(
        error.status === 400 && error.type === "invalid_request_error" && error.param === param,
        `${what} is a 400 invalid_request_error naming ${param}`, show(error.error));
  }
}

async function checkRequiredKey() {
  const rightKey = "sk-k3lab-sdk-right";
  const server = startMock(["--require-key", "--model", modelA], {...process.env, MOONSHOT_API_KEY: rightKey});
  try {
    const baseURL = await server.baseURL;
    const denied = await rejection(
        "a wrong key", OpenAI.AuthenticationError, () => client(baseURL, "sk-k3lab-sdk-wrong").models.list());
    check(denied.status === 401, "a wrong key is HTTP 401", String(denied.status));
    const deniedChat = await rejection(
        "a chat call with a wrong key",
        OpenAI.AuthenticationError,
        () =>
            client(baseURL, "sk-k3lab-sdk-wrong").chat.completions.create({model: modelA, messages: userTurn("hello")}),
    );
    check(deniedChat.status === 401, "a chat call with a wrong key is HTTP 401", String(deniedChat.status));
    const allowed =
        await client(baseURL, rightKey).chat.completions.create({model: modelA, messages: userTurn("hello")});
    check(allowed.choices.length === 1, "the right key is answered", show(allowed).slice(0, 300));
  } finally {
    await server.stop();
  }
}

const servers = [];
let exitCode = 0;
try {
  console.log(`openai SDK ${sdkVersion} (node ${process.version}) against ${k3labBinary} mock-server`);
  const server = startMock(["--model", modelA, "--model", modelB]);
  servers.push(server);
  const openai = client(await server.baseURL);
  const steps = [
    ["models", () => checkModels(openai)],
    ["non-streamed completion", async () => checkStreamed(openai, await checkNonStreamed(openai))],
    ["tool-call round trip", () => checkToolRoundTrip(openai)],
    ["bad requests", () => checkBadRequests(openai)],
    ["--require-key", () => checkRequiredKey()],
  ];
  for (const [name, step] of steps) {
    await step();
    console.log(`ok    ${name}`);
  }
  console.log(`sdk strict client: ${passed} checks passed`);
} catch (error) {
  console.error(`FAIL  ${error instanceof CheckFailed ? error.message : error?.stack ?? error}`);
  exitCode = 1;
} finally {
  await Promise.all(servers.map((s) => s.stop()));
}
process.exit(exitCode);
