import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { MeshAllowlistEntry } from '../../src/auth/mesh-allowlist.js';
import { meshPrincipal, parseWhoIs, type WhoIs } from '../../src/auth/mesh-principal.js';
import { ALICE_NODE_ID, ALICE_USER_ID, TAGGED_DEVICES_USER_ID, TAGGED_NODE_ID, WHOIS_TAGGED_NODE, WHOIS_USER_NODE } from '../helpers/localapi-stand-in.js';

const alice = parseWhoIs(WHOIS_USER_NODE)!;
const tagged = parseWhoIs(WHOIS_TAGGED_NODE)!;

describe('parseWhoIs', () => {
  it('reads the identifying fields of both sample answers', () => {
    assert.equal(alice.UserProfile.ID, Number(ALICE_USER_ID));
    assert.equal(alice.Node.StableID, ALICE_NODE_ID);
    assert.equal(alice.UserProfile.LoginName, 'alice@example.com');
    assert.deepEqual(tagged.Node.Tags, ['tag:ci', 'tag:prod']);
  });

  it('refuses what is not a whois answer', () => {
    for (const body of ['', 'no match for IP:port\n', '{', 'null', '[]', '{"Node":{}}',
      WHOIS_USER_NODE.replace('"StableID": "nDbSrv01CNTRL"', '"StableID": 7'),
      WHOIS_USER_NODE.replace('"LoginName": "alice@example.com"', '"LoginName": null')]) {
      assert.equal(parseWhoIs(body), undefined, body.slice(0, 60));
    }
  });

  it('refuses a user id that a number cannot hold exactly, so rounding cannot make two users one', () => {
    const big = WHOIS_USER_NODE.replace(`"ID": ${ALICE_USER_ID},\n\t\t"LoginName"`, '"ID": 9007199254740993,\n\t\t"LoginName"');
    assert.notEqual(big, WHOIS_USER_NODE);
    assert.equal(parseWhoIs(big), undefined);
  });
});

describe('meshPrincipal', () => {
  it('names a listed user by its user id, with the roles of its entry and the names of its profile', () => {
    assert.deepEqual(meshPrincipal(alice, [{ user: ALICE_USER_ID, roles: ['analyst', 'rule_admin'] }]), {
      id: `mesh:user:${ALICE_USER_ID}`, roles: ['analyst', 'rule_admin'], loginName: 'alice@example.com', displayName: 'Alice Example', authentication: 'mesh',
    });
  });

  it('names a user-owned node by its stable id when only the node is listed, and prefers the user when both are', () => {
    assert.equal(meshPrincipal(alice, [{ node: ALICE_NODE_ID, roles: ['viewer'] }])?.id, `mesh:node:${ALICE_NODE_ID}`);
    const both = meshPrincipal(alice, [{ node: ALICE_NODE_ID, roles: ['viewer'] }, { user: ALICE_USER_ID, roles: ['admin'] }]);
    assert.deepEqual([both?.id, both?.roles], [`mesh:user:${ALICE_USER_ID}`, ['admin']]);
  });

  it('names a tagged node only by its stable id, never by the shared tagged-devices profile', () => {
    assert.equal(meshPrincipal(tagged, [{ user: TAGGED_DEVICES_USER_ID, roles: ['admin'] }]), undefined);
    assert.deepEqual(meshPrincipal(tagged, [{ user: TAGGED_DEVICES_USER_ID, roles: ['admin'] }, { node: TAGGED_NODE_ID, roles: ['viewer'] }])?.roles, ['viewer']);
    const taggedByTagsOnly: WhoIs = { ...tagged, UserProfile: { ...tagged.UserProfile, LoginName: 'someone@example.com' } };
    assert.equal(meshPrincipal(taggedByTagsOnly, [{ user: TAGGED_DEVICES_USER_ID, roles: ['admin'] }]), undefined);
  });

  it('names no one the allowlist does not list', () => {
    assert.equal(meshPrincipal(alice, []), undefined);
    assert.equal(meshPrincipal(alice, [{ user: '6542213798012346', roles: ['admin'] }, { node: 'nDbSrv01CNTRl', roles: ['admin'] }]), undefined);
  });

  it('property: over arbitrary whois answers, a principal is always one the allowlist names, with exactly its roles', () => {
    const id = fc.oneof(fc.constantFrom(ALICE_USER_ID, TAGGED_DEVICES_USER_ID, '1', '9007199254740991'), fc.bigInt({ min: 0n, max: 2n ** 64n }).map(String));
    const node = fc.oneof(fc.constantFrom(ALICE_NODE_ID, TAGGED_NODE_ID, 'n1CNTRL'), fc.stringMatching(/^[A-Za-z0-9]{1,12}$/));
    const entry: fc.Arbitrary<MeshAllowlistEntry> = fc.oneof(
      fc.record({ user: id.filter((s) => /^[1-9][0-9]{0,15}$/.test(s) && Number.isSafeInteger(Number(s))), roles: fc.uniqueArray(fc.constantFrom('viewer', 'analyst', 'rule_admin', 'admin'), { minLength: 1 }) }),
      fc.record({ node, roles: fc.uniqueArray(fc.constantFrom('viewer', 'analyst', 'rule_admin', 'admin'), { minLength: 1 }) }),
    );
    const answer = fc.record({
      Node: fc.record({ StableID: node, Tags: fc.option(fc.array(fc.constantFrom('tag:ci', 'tag:x')), { nil: undefined }), Name: fc.string() }, { requiredKeys: ['StableID'] }),
      UserProfile: fc.record({ ID: fc.oneof(id.map(Number), fc.double(), fc.string()), LoginName: fc.oneof(fc.constantFrom('tagged-devices', 'alice@example.com'), fc.string()), DisplayName: fc.string() }, { requiredKeys: [] }),
      CapMap: fc.constant(null),
    }, { requiredKeys: [] });
    const body = fc.oneof(answer.map((a) => JSON.stringify(a, null, '\t')), fc.json(), fc.string(), fc.constantFrom(WHOIS_USER_NODE, WHOIS_TAGGED_NODE));
    fc.assert(fc.property(body, fc.array(entry, { maxLength: 6 }), (text, allowlist) => {
      const who = parseWhoIs(text);
      const p = who ? meshPrincipal(who, allowlist) : undefined;
      if (!p) return;
      assert.equal(p.authentication, 'mesh');
      const m = /^mesh:(user|node):(.+)$/.exec(p.id);
      assert.ok(m, p.id);
      const named = allowlist.find((e) => (m[1] === 'user' ? e.user : e.node) === m[2]);
      assert.ok(named, `${p.id} is not on the allowlist`);
      assert.deepEqual(p.roles, named.roles);
      if (m[1] === 'user') {
        assert.equal(who!.Node.Tags?.length ?? 0, 0, 'a tagged node is never a user');
        assert.notEqual(who!.UserProfile.LoginName, 'tagged-devices');
        assert.equal(String(who!.UserProfile.ID), m[2]);
      } else {
        assert.equal(who!.Node.StableID, m[2]);
      }
    }), { numRuns: 2000 });
  });
});
