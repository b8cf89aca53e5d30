/**
 * Microsoft Teams specifics beyond the channel kit: the Bot Framework JWT on inbound requests
 * (missing, forged, wrong audience/issuer/serviceUrl, expired → 401 and nothing forwarded),
 * the messaging endpoint's HTTP surface, the config keys and their refusals, the app token,
 * trusted serviceUrls, stored conversation references, @mention-only messages and
 * replyInThread.
 */
import { request } from "node:http";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { channelSettingNotes, unknownChannelTypes } from "../../src/channels/channel-types.js";
import { parseMSTeamsConfig } from "../../src/channels/msteams/config.js";
import { isTrustedServiceUrl } from "../../src/channels/msteams/trusted-hosts.js";
import { TEAMS_APP_ID, TEAMS_BOT, TEAMS_GROUP_CHAT, startFakeTeams } from "./helpers/fake-msteams.js";
import { nextInbound, tempHome, waitFor } from "./helpers/harness.js";
import { msteamsPlatform, startTeams } from "./kit/msteams-platform.js";
import type { TeamsSession } from "./kit/msteams-platform.js";

const { alice } = msteamsPlatform.users;
let session: TeamsSession | undefined;
let extra: TeamsSession | undefined;

afterEach(async () => {
  await session?.close();
  await extra?.close();
  session = extra = undefined;
});

function dmActivity(s: TeamsSession, text: string, id = `raw-${Math.random().toString(36).slice(2)}`): Record<string, unknown> {
  return {
    type: "message",
    id,
    serviceUrl: s.fake.url,
    channelId: "msteams",
    from: { id: "29:alice", name: "alice", aadObjectId: alice.id },
    conversation: { id: s.fake.dmConversation(alice), conversationType: "personal" },
    recipient: { id: TEAMS_BOT.id, name: TEAMS_BOT.name },
    text,
  };
}

function raw(url: string, method: string, body = ""): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { "content-type": "application/json" } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("msteams inbound authentication", () => {
  it("refuses requests without a valid Bot Framework token with 401 and forwards nothing", async () => {
    session = await startTeams({ allowFrom: [alice.id] });
    const s = session;
    const now = Math.floor(Date.now() / 1000);
    const refused = [
      await s.fake.deliver(dmActivity(s, "no token"), { authorization: null }),
      await s.fake.deliver(dmActivity(s, "not a jwt"), { authorization: "Bearer not-a-jwt" }),
      await s.fake.deliver(dmActivity(s, "forged"), { foreignKey: true }),
      await s.fake.deliver(dmActivity(s, "other bot"), { claims: { aud: "another-app-id" } }),
      await s.fake.deliver(dmActivity(s, "other issuer"), { claims: { iss: "https://evil.example" } }),
      await s.fake.deliver(dmActivity(s, "expired"), { claims: { exp: now - 3600, nbf: now - 7200 } }),
      await s.fake.deliver(dmActivity(s, "other connector"), { claims: { serviceurl: "https://smba.trafficmanager.net/emea/" } }),
    ];
    expect(refused).toEqual([401, 401, 401, 401, 401, 401, 401]);
    expect(await s.fake.deliver(dmActivity(s, "signed"))).toBe(200);
    expect((await nextInbound(s.bus)).content).toBe("signed");
    expect(s.bus.inboundSize()).toBe(0);
    // botbuilder fetched the keys from the configured OpenID metadata URL.
    expect(s.fake.requests.some((r) => r.path === "/v1/.well-known/keys")).toBe(true);
  });

  it("with validateInboundAuth false, accepts unsigned requests (and config check warns)", async () => {
    session = await startTeams({ allowFrom: [alice.id], validateInboundAuth: false });
    expect(await session.fake.deliver(dmActivity(session, "unsigned"), { authorization: null })).toBe(200);
    expect((await nextInbound(session.bus)).content).toBe("unsigned");
    expect(channelSettingNotes({ msteams: { enabled: true, validateInboundAuth: false } })).toEqual([expect.stringContaining("channels.msteams.validateInboundAuth is false")]);
    expect(channelSettingNotes({ msteams: { enabled: true } })).toEqual([]);
  });

  it("answers only POSTs of JSON to its path", async () => {
    session = await startTeams();
    const endpoint = session.channel.endpoint()!;
    expect(await raw(endpoint.replace("/api/messages", "/other"), "POST", "{}")).toBe(404);
    expect(await raw(endpoint, "GET")).toBe(405);
    expect(await raw(endpoint, "POST", "not json")).toBe(400);
  });

  it("ignores an activity whose serviceUrl is not trusted, even when signed for it", async () => {
    session = await startTeams({ allowFrom: [alice.id] });
    const evil = { ...dmActivity(session, "from elsewhere"), serviceUrl: "https://connector.evil.example/" };
    expect(await session.fake.deliver(evil, { claims: { serviceurl: "https://connector.evil.example/" } })).toBe(200);
    await session.fake.userSays({ user: alice, text: "from teams" });
    expect((await nextInbound(session.bus)).content).toBe("from teams");
    expect(session.bus.inboundSize()).toBe(0);
  });
});

describe("msteams config", () => {
  it("refuses to start without appId or appPassword, naming the key", () => {
    expect(() => parseMSTeamsConfig({ enabled: true, appPassword: "x" })).toThrow(/channels\.msteams\.appId: expected the Azure Bot's Microsoft App ID/);
    expect(() => parseMSTeamsConfig({ enabled: true, appId: "x" }, "teams")).toThrow(/channels\.teams\.appPassword: expected a client secret/);
    expect(() => parseMSTeamsConfig({ appId: "a", appPassword: "b", port: "3978" })).toThrow(/channels\.msteams\.port: expected a port number/);
  });

  it("reads the Python keys with the Python defaults", () => {
    const config = parseMSTeamsConfig({ appId: "a", appPassword: "b" });
    expect(config).toMatchObject({
      host: "0.0.0.0",
      port: 3978,
      path: "/api/messages",
      tenantId: "",
      replyInThread: true,
      mentionOnlyResponse: "Hi — what can I help with?",
      validateInboundAuth: true,
      refTtlDays: 30,
      pruneWebChatRefs: true,
      pruneNonPersonalRefs: true,
      refTouchIntervalS: 300,
    });
    expect(config.trustedServiceUrlHosts).toContain("smba.trafficmanager.net");
  });

  it("is a channel type nanobot has", () => {
    expect(unknownChannelTypes({ msteams: { enabled: true, appId: "a", appPassword: "b" } })).toEqual([]);
  });

  it("a refused appPassword fails the start with the token endpoint's reason", async () => {
    await expect(startTeams({ appPassword: "wrong" })).rejects.toThrow(/msteams did not start: .*HTTP 401.*channels\.msteams\.appPassword/);
  });

  it("gets its app token with the client-credentials grant from the tenant's token endpoint", async () => {
    session = await startTeams({ tenantId: "contoso-tenant" });
    expect(session.fake.requests.some((r) => r.method === "POST" && r.path === "/contoso-tenant/oauth2/v2.0/token")).toBe(true);
    expect(session.fake.tokenRequests[0]).toMatchObject({ grant_type: "client_credentials", client_id: TEAMS_APP_ID, scope: "https://api.botframework.com/.default" });
    expect(session.channel.status()).toEqual({ connected: true });
  });
});

describe("msteams trusted serviceUrls", () => {
  it("trusts HTTPS to listed hosts and wildcards, plain HTTP only on loopback", () => {
    const hosts = ["smba.trafficmanager.net", "*.botframework.com", "127.0.0.1"];
    expect(isTrustedServiceUrl("https://smba.trafficmanager.net/amer/", hosts)).toBe(true);
    expect(isTrustedServiceUrl("https://europe.botframework.com/", hosts)).toBe(true);
    expect(isTrustedServiceUrl("https://botframework.com/", hosts)).toBe(false);
    expect(isTrustedServiceUrl("http://smba.trafficmanager.net/amer/", hosts)).toBe(false);
    expect(isTrustedServiceUrl("https://smba.trafficmanager.net.evil.example/", hosts)).toBe(false);
    expect(isTrustedServiceUrl("http://127.0.0.1:3978/", hosts)).toBe(true);
    expect(isTrustedServiceUrl("not a url", hosts)).toBe(false);
  });
});

describe("msteams conversations", () => {
  it("remembers a personal chat's serviceUrl across a restart; group chats are not written to disk", async () => {
    const home = await tempHome();
    const fake = await startFakeTeams();
    try {
      // The default serviceUrl (Teams' global connector) is not trusted here: only stored references can be used.
      const config = { allowFrom: [alice.id], serviceUrl: "https://smba.trafficmanager.net/teams/" };
      session = await startTeams(config, { home: home.dir, fake });
      await fake.userSays({ user: alice, text: "remember me" });
      await fake.userSays({ user: alice, text: "group too", group: true, mention: true });
      await nextInbound(session.bus);
      await nextInbound(session.bus);
      const dm = fake.dmConversation(alice);
      const stored = JSON.parse(await readFile(join(home.dir, "state", "msteams-conversations.json"), "utf8")) as Record<string, { serviceUrl: string }>;
      expect(Object.keys(stored)).toEqual([dm]);
      expect(stored[dm]!.serviceUrl).toBe(fake.url);
      await session.close();
      session = undefined;

      extra = await startTeams(config, { home: home.dir, fake });
      await extra.bus.publishOutbound({ kind: "message", channel: "msteams", chatId: dm, id: "d-1", content: "after the restart" });
      expect(fake.messages.map((m) => [m.conversationId, m.text])).toEqual([[dm, "after the restart"]]);
      await extra.bus.publishOutbound({ kind: "message", channel: "msteams", chatId: TEAMS_GROUP_CHAT, id: "g-1", content: "to the group" });
      await waitFor(() => extra!.busErrors.length === 1, "the refused group send");
      const failure = extra.busErrors[0]!.error as Error;
      expect(failure.message).toBe("delivery msteams:g-1#0 failed after 1 attempt");
      expect((failure.cause as Error).message).toMatch(/not in channels\.msteams\.trustedServiceUrlHosts/);
    } finally {
      await extra?.close();
      extra = undefined;
      await fake.close();
      await home.cleanup();
    }
  });

  it("hands the agent mentionOnlyResponse for a bare @mention; an empty one drops it", async () => {
    session = await startTeams({ allowFrom: [alice.id] });
    await session.fake.userSays({ user: alice, text: "", group: true, mention: true });
    expect((await nextInbound(session.bus)).content).toBe("Hi — what can I help with?");
    await session.close();
    session = await startTeams({ allowFrom: [alice.id], mentionOnlyResponse: "" });
    await session.fake.userSays({ user: alice, text: "", group: true, mention: true });
    await session.fake.userSays({ user: alice, text: "real question", group: true, mention: true });
    expect((await nextInbound(session.bus)).content).toBe("real question");
  });

  it("replyInThread threads a reply to the last message of the chat; off, it does not", async () => {
    session = await startTeams({ allowFrom: [alice.id] });
    const asked = await session.fake.userSays({ user: alice, text: "question" });
    await nextInbound(session.bus);
    await session.bus.publishOutbound({ kind: "message", channel: "msteams", chatId: session.fake.dmConversation(alice), id: "t-1", content: "threaded" });
    expect(session.fake.messages.map((m) => [m.text, m.replyTo])).toEqual([["threaded", asked]]);
    await session.close();

    session = await startTeams({ allowFrom: [alice.id], replyInThread: false });
    await session.fake.userSays({ user: alice, text: "question" });
    await nextInbound(session.bus);
    await session.bus.publishOutbound({ kind: "message", channel: "msteams", chatId: session.fake.dmConversation(alice), id: "t-2", content: "flat" });
    expect(session.fake.messages.map((m) => [m.text, m.replyTo])).toEqual([["flat", undefined]]);
  });

  it("waits as long as a 429's Retry-After says before sending again", async () => {
    session = await startTeams({ allowFrom: [alice.id] }, { switches: { sendMaxRetries: 3 } });
    session.fake.failNext("POST /v3/conversations/:id/activities", 429, 1);
    await session.bus.publishOutbound({ kind: "message", channel: "msteams", chatId: session.fake.dmConversation(alice), id: "r-429", content: "after the throttle" });
    expect(session.fake.messages.map((m) => m.text)).toEqual(["after the throttle"]);
    expect(session.waits).toEqual([2000]);
    expect(session.busErrors).toEqual([]);
  });

  it("downloads a file shared in a personal chat from its downloadUrl, without the bot's token", async () => {
    session = await startTeams({ allowFrom: [alice.id] });
    const downloadUrl = session.fake.shareFile("QUARTERLY", "application/pdf");
    await session.fake.userSays({
      user: alice,
      text: "summarise",
      extra: {
        attachments: [
          { contentType: "application/vnd.microsoft.teams.file.download.info", name: "q3.pdf", content: { downloadUrl, uniqueId: "u1", fileType: "pdf" } },
          { contentType: "text/html", content: "<p>summarise</p>" },
        ],
      },
    });
    const inbound = await nextInbound(session.bus);
    expect(inbound.media).toHaveLength(1);
    expect(inbound.media![0]).toMatchObject({ kind: "document", name: "q3.pdf", mimeType: "application/pdf" });
    expect(await readFile(inbound.media![0]!.path!, "utf8")).toBe("QUARTERLY");
    const fetched = session.fake.requests.find((r) => r.path.startsWith("/shared/"));
    expect(fetched?.authorization).toBeUndefined();
  });

  it("strips the bot's <at> mention but keeps other people's names", async () => {
    session = await startTeams({ allowFrom: [alice.id] });
    await session.fake.userSays({ user: alice, text: "ask <at>Bob</at> &amp; me", group: true, mention: true });
    expect((await nextInbound(session.bus)).content).toBe("ask Bob & me");
  });
});
