// Package replay remembers which signed messages the gateway has already
// accepted, so that a captured request cannot be played back.
//
// Contract (DESIGN §5.7, "a verified message is accepted once"):
//
//   - The caller builds the key from what verification proved, never from
//     raw bytes an attacker can vary for free: the digest of the canonical
//     verified SignedInfo together with the signer's identity, or a
//     UsernameToken nonce together with its user. Two keys are the same
//     message only if those are the same.
//   - Store.Seen is a single atomic test-and-set: of two concurrent calls with
//     the same key, from the same process or from replicas sharing one Redis,
//     exactly one reports replayed == false.
//   - A key is remembered until the expiry the caller passes, which is the
//     time after which the timestamp checks would reject the message anyway.
//     An expiry that has already passed is an error (ErrExpired): such a
//     message should never have got this far.
//   - The store fails closed. Any backend failure (Redis unreachable, timed
//     out, refusing our credentials, a full memory store, a closed store)
//     returns an error wrapping ErrUnavailable, and the caller rejects the
//     message. On every error Seen also returns replayed == true, so that a
//     caller which forgets to look at the error still rejects.
//   - A store that lost what it recorded says so (Reset, LastReset; issue
//     16): a Redis that restarted, was flushed or failed over (canary.go),
//     a memory store that started with its process. The caller then
//     refuses, for its timestamp window, messages that could have been
//     accepted before the loss, since their replays would now pass.
//
// Memory is the default, for a single replica. Redis shares the cache across
// replicas; it uses github.com/redis/go-redis/v9, the client maintained by
// Redis itself, which is widely used, actively released, and has no
// dependencies beyond small hashing packages.
package replay
