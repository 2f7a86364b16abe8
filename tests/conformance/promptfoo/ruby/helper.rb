# Required by checks.rb from its own folder (the folder is on the load path).
module Helper
  def self.shout(text)
    text.upcase
  end
end
