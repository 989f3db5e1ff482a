// MPIOR_* options. Each is declared next to the code that reads it:
//
//   constinit config::Option<bool> opt_prune{"MPIOR_PRUNE", true, "what it does"};
//   MPIOR_REGISTER_OPTION(opt_prune);
//
// Registration puts a pointer in a linker section, so every option is known
// without any static-initialisation order; values are read once from the
// environment by config::load() at load time. MPIOR_DUMP_CONFIG=1 prints all.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace mpior::preload::config {

class OptionBase {
 public:
  constexpr OptionBase(const char* name, const char* help) : name_(name), help_(help) {}
  const char* name() const { return name_; }
  const char* help() const { return help_; }
  virtual const char* type() const = 0;
  virtual std::string value_text() const = 0;
  virtual std::string default_text() const = 0;
  // Parses the text; false when it is not a valid value (the default stays).
  virtual bool parse(std::string_view text) = 0;

 protected:
  ~OptionBase() = default;

 private:
  const char* name_;
  const char* help_;
};

// Value parsing and printing for the three option types (config.cpp).
bool parse_value(std::string_view text, bool* out);
bool parse_value(std::string_view text, int64_t* out);
// Keeps a copy of the text; false when choices (a|b|c) does not list it.
bool parse_value(std::string_view text, std::string_view* out, const char* choices);
std::string print_value(bool v);
std::string print_value(int64_t v);
std::string print_value(std::string_view v);

template <typename T>
class Option final : public OptionBase {
 public:
  constexpr Option(const char* name, T def, const char* help, const char* choices = nullptr)
      : OptionBase(name, help), default_(def), value_(def), choices_(choices) {}
  const T& get() const { return value_; }
  const char* type() const override {
    if constexpr (std::is_same_v<T, bool>) return "bool";
    if constexpr (std::is_same_v<T, int64_t>) return "integer";
    if constexpr (std::is_same_v<T, std::string_view>) return choices_ ? choices_ : "string";
  }
  std::string value_text() const override { return print_value(value_); }
  std::string default_text() const override { return print_value(default_); }
  bool parse(std::string_view text) override {
    if constexpr (std::is_same_v<T, std::string_view>)
      return parse_value(text, &value_, choices_);
    else
      return parse_value(text, &value_);
  }

 private:
  T default_;
  T value_;
  const char* choices_;  // for string options: allowed values, '|'-separated
};

// Reads every registered option from the environment (once). Prints invalid
// values as warnings, and the whole table when MPIOR_DUMP_CONFIG is set.
void load();
// Every option as "NAME  type  default  help" lines (README and --help text).
std::string describe_all();

}  // namespace mpior::preload::config

#define MPIOR_REGISTER_OPTION(opt)                                                                                 \
  __attribute__((                                                                                                  \
      used, section("mpior_options"))) static ::mpior::preload::config::OptionBase* const mpior_option_ptr_##opt = \
      &opt
