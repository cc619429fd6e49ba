// Small string helpers: edit distance for did-you-mean suggestions.
#pragma once
#include <string>
#include <vector>

namespace quarkplan {

size_t edit_distance(const std::string& a, const std::string& b);
// The closest candidates to `word` (at most `n`, within a distance that scales
// with the word's length), best first; empty when nothing is close.
std::vector<std::string> closest(const std::string& word, const std::vector<std::string>& candidates, size_t n = 3);
// " (did you mean 'x'?)" or "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);
std::string join(const std::vector<std::string>& v, const std::string& sep = ", ");
std::string lower(std::string s);
// "5.11.0" -> {5, 11, 0} (at most four numbers, up to the first part that is not one): enough to
// order package versions such as transformers'.
std::vector<int> version_numbers(const std::string& v);

}  // namespace quarkplan
