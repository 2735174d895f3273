// server/sasl: the SCRAM keys against RFC 7677's published example, and whole
// exchanges (SCRAM-SHA512/256/1, PLAIN) driven by a client written here from
// RFC 5802 §3 with the same OpenSSL primitives.
#include <map>
#include <string>

#include <absl/strings/escaping.h>
#include <absl/strings/str_cat.h>
#include <gtest/gtest.h>

#include "server/sasl/crypto.h"
#include "server/sasl/exchange.h"
#include "server/sasl/user_store.h"

namespace syncwrite::server::sasl {
namespace {

using Outcome = StepResult::Outcome;

std::string unbase64(std::string_view text) {
  std::string out;
  EXPECT_TRUE(absl::Base64Unescape(absl::string_view(text.data(), text.size()), &out));
  return out;
}

std::string xorOf(std::string a, const std::string& b) {
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<char>(a[i] ^ b[i]);
  return a;
}

// RFC 7677 §3: user "user", password "pencil", SCRAM-SHA-256.
TEST(Scram, KeysMatchRfc7677Example) {
  const ScramCredentials c =
      scramCredentials(Hash::kSha256, "pencil", unbase64("W22ZaJ0SNY7soEsUEjb6gQ=="), 4096);
  const std::string auth_message =
      "n=user,r=rOprNGfwEbeRWgbNEkqO,"
      "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,"
      "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
  const std::string proof = unbase64("dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=");
  const std::string client_key = xorOf(proof, hmac(Hash::kSha256, c.stored_key, auth_message));
  EXPECT_EQ(digest(Hash::kSha256, client_key), c.stored_key);
  EXPECT_EQ(absl::Base64Escape(hmac(Hash::kSha256, c.server_key, auth_message)),
            "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=");
}

// A SCRAM client (RFC 5802 §3): the client-final message for `server_first`.
struct ScramClient {
  Hash hash;
  std::string user;
  std::string password;
  std::string nonce;

  std::string first() const { return absl::StrCat("n,,n=", user, ",r=", nonce); }
  std::string bare() const { return first().substr(3); }

  // Parses r=, s=, i= (in that order, as the server sends them).
  std::string final(const std::string& server_first, std::string* expected_v) const {
    const size_t s_at = server_first.find(",s=");
    const size_t i_at = server_first.find(",i=");
    const std::string combined = server_first.substr(2, s_at - 2);
    const std::string salt = unbase64(server_first.substr(s_at + 3, i_at - s_at - 3));
    const int iterations = std::stoi(server_first.substr(i_at + 3));
    const std::string salted = pbkdf2(hash, password, salt, iterations);
    const std::string client_key = hmac(hash, salted, "Client Key");
    const std::string without_proof = absl::StrCat("c=biws,r=", combined);
    const std::string auth = absl::StrCat(bare(), ",", server_first, ",", without_proof);
    const std::string proof = xorOf(client_key, hmac(hash, digest(hash, client_key), auth));
    *expected_v =
        absl::StrCat("v=", absl::Base64Escape(hmac(hash, hmac(hash, salted, "Server Key"), auth)));
    return absl::StrCat(without_proof, ",p=", absl::Base64Escape(proof));
  }
};

UserStore store() { return UserStore({{"alice", "s3cret"}, {"bob,=x", "pw"}}); }

struct Mechanism {
  const char* name;
  Hash hash;
};

class ScramExchangeTest : public ::testing::TestWithParam<Mechanism> {};

TEST_P(ScramExchangeTest, AuthenticatesWithTheRightPasswordOnly) {
  const UserStore users = store();
  // The couchbase-cxx-client nonce: hex bytes separated by spaces.
  const std::string nonce = "0x1f 0xffffffab 0x03 0x7e";
  for (const auto& [password, accepted] :
       std::map<std::string, bool>{{"s3cret", true}, {"wrong", false}}) {
    auto exchange = SaslExchange::start(GetParam().name, users);
    ASSERT_NE(exchange, nullptr);
    ScramClient client{GetParam().hash, "alice", password, nonce};
    const StepResult first = exchange->step(client.first());
    ASSERT_EQ(first.outcome, Outcome::kContinue) << first.error;
    EXPECT_TRUE(first.payload.starts_with("r=" + nonce)) << first.payload;
    std::string expected_v;
    const StepResult last = exchange->step(client.final(first.payload, &expected_v));
    if (accepted) {
      ASSERT_EQ(last.outcome, Outcome::kSuccess) << last.error;
      EXPECT_EQ(last.user, "alice");
      EXPECT_EQ(last.payload, expected_v);
    } else {
      EXPECT_EQ(last.outcome, Outcome::kFailure);
      EXPECT_EQ(last.user, "alice");
    }
    EXPECT_EQ(exchange->step("more").outcome, Outcome::kFailure);  // over
  }
}

TEST_P(ScramExchangeTest, AnUnknownUserLooksTheSameUntilTheProof) {
  const UserStore users = store();
  auto exchange = SaslExchange::start(GetParam().name, users);
  ScramClient client{GetParam().hash, "mallory", "s3cret", "abc"};
  const StepResult first = exchange->step(client.first());
  ASSERT_EQ(first.outcome, Outcome::kContinue);
  EXPECT_NE(first.payload.find(",s="), std::string::npos);
  std::string expected_v;
  EXPECT_EQ(exchange->step(client.final(first.payload, &expected_v)).outcome, Outcome::kFailure);
}

INSTANTIATE_TEST_SUITE_P(Hashes, ScramExchangeTest,
                         ::testing::Values(Mechanism{"SCRAM-SHA512", Hash::kSha512},
                                           Mechanism{"SCRAM-SHA256", Hash::kSha256},
                                           Mechanism{"SCRAM-SHA1", Hash::kSha1}),
                         [](const auto& info) { return std::string(info.param.name).substr(6); });

TEST(ScramExchange, DecodesEscapedNames) {
  const UserStore users = store();
  auto exchange = SaslExchange::start("SCRAM-SHA256", users);
  ScramClient client{Hash::kSha256, "bob=2C=3Dx", "pw", "n1"};
  const StepResult first = exchange->step(client.first());
  ASSERT_EQ(first.outcome, Outcome::kContinue);
  std::string expected_v;
  const StepResult last = exchange->step(client.final(first.payload, &expected_v));
  EXPECT_EQ(last.outcome, Outcome::kSuccess) << last.error;
  EXPECT_EQ(last.user, "bob,=x");
}

TEST(ScramExchange, RefusesMalformedMessages) {
  const UserStore users = store();
  for (const std::string& first :
       {std::string(""), std::string("n"), std::string("p=tls-unique,,n=alice,r=x"),
        std::string("n,,r=x,n=alice"), std::string("n,,n=alice,r="),
        std::string("n,,n=al=41ice,r=x"), std::string("n,,n=alice,r=x,m=ext")}) {
    auto exchange = SaslExchange::start("SCRAM-SHA512", users);
    EXPECT_EQ(exchange->step(first).outcome, Outcome::kFailure) << first;
  }
  auto exchange = SaslExchange::start("SCRAM-SHA512", users);
  const StepResult first = exchange->step("n,,n=alice,r=abc");
  ASSERT_EQ(first.outcome, Outcome::kContinue);
  const std::string nonce = first.payload.substr(2, first.payload.find(",s=") - 2);
  // Wrong channel binding, wrong nonce, proof of the wrong size: each fails.
  for (const std::string& final :
       {absl::StrCat("c=eSws,r=", nonce, ",p=AAAA"), std::string("c=biws,r=abc,p=AAAA"),
        absl::StrCat("c=biws,r=", nonce, ",p=AAAA")}) {
    auto again = SaslExchange::start("SCRAM-SHA512", users);
    const StepResult f = again->step("n,,n=alice,r=abc");
    const std::string n = f.payload.substr(2, f.payload.find(",s=") - 2);
    std::string message = final;
    if (message.find(nonce) != std::string::npos)
      message.replace(message.find(nonce), nonce.size(), n);
    EXPECT_EQ(again->step(message).outcome, Outcome::kFailure) << message;
  }
}

TEST(PlainExchange, ChecksThePassword) {
  const UserStore users = store();
  const auto run = [&](std::string_view message) {
    return SaslExchange::start("PLAIN", users)->step(message);
  };
  EXPECT_EQ(run(std::string("\0alice\0s3cret", 13)).outcome, Outcome::kSuccess);
  EXPECT_EQ(run(std::string("alice\0alice\0s3cret", 18)).outcome, Outcome::kSuccess);
  EXPECT_EQ(run(std::string("\0alice\0nope", 11)).outcome, Outcome::kFailure);
  EXPECT_EQ(run(std::string("\0mallory\0s3cret", 15)).outcome, Outcome::kFailure);
  EXPECT_EQ(run("alice s3cret").outcome, Outcome::kFailure);
}

TEST(SaslExchange, UnknownMechanismIsNull) {
  const UserStore users = store();
  EXPECT_EQ(SaslExchange::start("SCRAM-SHA-512", users), nullptr);
  EXPECT_EQ(SaslExchange::start("", users), nullptr);
}

}  // namespace
}  // namespace syncwrite::server::sasl
