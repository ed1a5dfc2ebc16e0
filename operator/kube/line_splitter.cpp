#include "operator/kube/line_splitter.hpp"

#include <cstring>

namespace meshop::kube {

bool LineSplitter::feed(std::string_view data) {
  // Drop consumed bytes once they dominate the buffer, so a long stream does not grow it.
  if (start_ > 0 && start_ >= buffer_.size() / 2) {
    buffer_.erase(0, start_);
    scan_ -= start_;
    start_ = 0;
  }
  buffer_.append(data);
  if (buffer_.size() - start_ > max_line_) {
    // Over the limit only if no line ends within the limit.
    const char* nl =
        static_cast<const char*>(std::memchr(buffer_.data() + scan_, '\n', buffer_.size() - scan_));
    if (nl == nullptr || static_cast<std::size_t>(nl - buffer_.data()) - start_ > max_line_) {
      return false;
    }
  }
  return true;
}

std::optional<std::string_view> LineSplitter::next_line() {
  for (;;) {
    if (scan_ < start_) scan_ = start_;
    const char* base = buffer_.data();
    const char* nl =
        static_cast<const char*>(std::memchr(base + scan_, '\n', buffer_.size() - scan_));
    if (nl == nullptr) {
      scan_ = buffer_.size();
      return std::nullopt;
    }
    std::size_t end = static_cast<std::size_t>(nl - base);
    std::string_view line(base + start_, end - start_);
    start_ = end + 1;
    scan_ = start_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    return line;
  }
}

}  // namespace meshop::kube
