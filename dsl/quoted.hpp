#pragma once
// User text inside a message: between quotes, with the quote, backslashes and control characters
// escaped (\n, \t, \xHH), so that what a user typed stays on the message's line and cannot pass
// for a line of flexjit's own output.
#include <string>
#include <string_view>

namespace flexjit::dsl {

std::string quoted(std::string_view text, char quote = '\'');

}  // namespace flexjit::dsl
