// Random JSON values for property and differential tests of meshop::api.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "api/json.hpp"

namespace meshop::api {

// Random JSON values built from awkward pieces; yaml_to_json(json_to_yaml(x)) must equal x.
class RandomJson {
 public:
  // `control_characters`: whether strings may contain C0 controls (Go's YAML reader rejects
  // them in JSON input, so the differential test leaves them out).
  explicit RandomJson(unsigned seed, bool control_characters = true)
      : rng_(seed), control_(control_characters) {}
  void value(Value& out, Allocator& a, int depth) {
    int pick = static_cast<int>(rng_() % (depth > 3 ? 6 : 8));
    switch (pick) {
      case 0:
        out.SetNull();
        break;
      case 1:
        out.SetBool(rng_() % 2 == 0);
        break;
      case 2:
        out.SetInt64(static_cast<std::int64_t>(rng_()) - 1000000);
        break;
      case 3:
        out.SetDouble(static_cast<double>(static_cast<int>(rng_() % 2000000) - 1000000) / 1000.0);
        break;
      case 4:
      case 5: {
        std::string s = string();
        out.SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
        break;
      }
      case 6: {
        out.SetArray();
        int n = static_cast<int>(rng_() % 4);
        for (int i = 0; i < n; ++i) {
          Value v;
          value(v, a, depth + 1);
          out.PushBack(v, a);
        }
        break;
      }
      default: {
        out.SetObject();
        int n = static_cast<int>(rng_() % 4);
        for (int i = 0; i < n; ++i) {
          std::string k = string();
          if (find_member(out, k) != nullptr) continue;
          Value v;
          value(v, a, depth + 1);
          out.AddMember(Value(k.data(), static_cast<rapidjson::SizeType>(k.size()), a), v, a);
        }
      }
    }
  }

 private:
  std::string string() {
    static const char* const kPieces[] = {"a",
                                          "on",
                                          "yes",
                                          "No",
                                          "~",
                                          "null",
                                          "1",
                                          "0x1F",
                                          "1.5",
                                          "1e3",
                                          ".inf",
                                          "-",
                                          ": ",
                                          "#",
                                          " ",
                                          "\n",
                                          "'",
                                          "\"",
                                          "\\",
                                          "[",
                                          "]",
                                          "{",
                                          "}",
                                          ",",
                                          "&",
                                          "*",
                                          "!",
                                          "|",
                                          ">",
                                          "%",
                                          "@",
                                          "`",
                                          "?",
                                          "é",
                                          "\xe2\x80\xa8",
                                          "\xf0\x9f\x98\x80",
                                          "2001-01-01",
                                          "12:30",
                                          "---",
                                          "...",
                                          "<<",
                                          "=",
                                          "0",
                                          "_",
                                          "+",
                                          "\t",
                                          "\r",
                                          "\x01"};
    constexpr std::size_t kCount = sizeof kPieces / sizeof kPieces[0];
    std::string s;
    // Mostly short strings; some long enough for go-yaml's line folding at column 80.
    int n = static_cast<int>(rng_() % 8 == 0 ? 10 + rng_() % 40 : rng_() % 5);
    for (int i = 0; i < n; ++i) {
      std::string piece = kPieces[rng_() % (control_ ? kCount : kCount - 3)];
      s += piece;
    }
    return s;
  }
  std::mt19937 rng_;
  bool control_;
};

}  // namespace meshop::api
